//! The parts of a Responses API body the server reads, deserialized straight from the
//! bytes: everything else is skipped as it is parsed, with no `Value` tree and no copies
//! of strings that need no unescaping.
//!
//! Reading is as lenient as looking fields up in a `Value`: a field of an unexpected type
//! reads as absent (a string field holding a number, a list holding an object, an object
//! holding a string), a repeated key keeps its last value, and only malformed JSON fails.

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// A string field: `None` when absent or not a string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Text<'a>(Option<Cow<'a, str>>);

impl Text<'_> {
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// A list field: its elements when it is an array, empty otherwise. Elements read as
/// leniently as fields, so one odd element never spoils the others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct List<T>(Vec<T>);

impl<T> Default for List<T> {
    fn default() -> Self {
        List(Vec::new())
    }
}

impl<T> std::ops::Deref for List<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

/// An object kept whole, for the error object whose fields are read by name later;
/// `None` when absent or not an object.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Object(Option<Value>);

impl Object {
    pub fn get(&self) -> Option<&Value> {
        self.0.as_ref()
    }
}

/// Visitor methods for the JSON shapes a type does not want: the value is skipped and the
/// type's default stands. (`arbitrary_precision` numbers arrive as maps; each type that
/// takes maps handles that itself.)
macro_rules! skip_other_shapes {
    () => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_i128<E>(self, _: i128) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_u128<E>(self, _: u128) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

macro_rules! skip_strings {
    () => {
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
    };
}

macro_rules! skip_seqs {
    () => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
}

macro_rules! skip_maps {
    () => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
}

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Some(Cow::Owned(v))))
            }
            skip_other_shapes!();
            skip_seqs!();
            skip_maps!();
        }
        d.deserialize_any(V)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List<T>, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(List(items))
            }
            skip_other_shapes!();
            skip_strings!();
            skip_maps!();
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Object;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object, A::Error> {
                let value = Value::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                // An `arbitrary_precision` number also arrives as a map.
                Ok(Object(Some(value).filter(Value::is_object)))
            }
            skip_other_shapes!();
            skip_strings!();
            skip_seqs!();
        }
        d.deserialize_any(V)
    }
}

/// A struct of lenient fields, read from an object by key (last one wins, unknown keys
/// skipped); any other JSON value reads as the default.
macro_rules! lenient_struct {
    ($(#[$meta:meta])* $name:ident { $($(#[$fmeta:meta])* $field:ident: $ty:ty = $key:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct $name<'a> {
            $(
                #[doc = concat!("The `", $key, "` field.")]
                $(#[$fmeta])*
                pub $field: $ty,
            )*
        }

        impl<'de> Deserialize<'de> for $name<'de> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name<'de>;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("any JSON value")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                        let mut out = $name::default();
                        while let Some(key) = map.next_key::<Text<'de>>()? {
                            match key.get() {
                                $(Some($key) => out.$field = map.next_value()?,)*
                                _ => {
                                    map.next_value::<IgnoredAny>()?;
                                }
                            }
                        }
                        Ok(out)
                    }
                    skip_other_shapes!();
                    skip_strings!();
                    skip_seqs!();
                }
                d.deserialize_any(V)
            }
        }
    };
}

lenient_struct! {
    /// A Responses API body.
    ResponseBody {
        id: Text<'a> = "id",
        status: Text<'a> = "status",
        usage: Object = "usage",
        tool_usage: Object = "tool_usage",
        model: Text<'a> = "model",
        service_tier: Text<'a> = "service_tier",
        incomplete_details: IncompleteDetails<'a> = "incomplete_details",
        error: Object = "error",
        output: List<Item<'a>> = "output",
    }
}

lenient_struct! {
    IncompleteDetails {
        reason: Text<'a> = "reason",
    }
}

lenient_struct! {
    /// An `output` item: a message, a web search call, reasoning, ...
    Item {
        kind: Text<'a> = "type",
        /// `commentary` or `final_answer` on newer models' messages.
        phase: Text<'a> = "phase",
        content: List<Part<'a>> = "content",
        action: Action<'a> = "action",
        /// Perplexity's `search_results` item: the pages its `web_search` tool found.
        results: List<SearchResult<'a>> = "results",
    }
}

lenient_struct! {
    /// One page of a Perplexity `search_results` item.
    SearchResult {
        url: Text<'a> = "url",
        title: Text<'a> = "title",
        /// When the page was published, as the service reports it (`YYYY-MM-DD`).
        date: Text<'a> = "date",
    }
}

lenient_struct! {
    /// What a web search call did.
    Action {
        kind: Text<'a> = "type",
        sources: List<Source<'a>> = "sources",
    }
}

lenient_struct! {
    /// A message's content part: `output_text` or `refusal`.
    Part {
        kind: Text<'a> = "type",
        text: Text<'a> = "text",
        annotations: List<Annotation<'a>> = "annotations",
        refusal: Text<'a> = "refusal",
    }
}

lenient_struct! {
    Annotation {
        kind: Text<'a> = "type",
        url: Text<'a> = "url",
        title: Text<'a> = "title",
    }
}

lenient_struct! {
    /// A web search source: a page (`url`, `title`) or an API (`name`, e.g. `oai-weather`).
    Source {
        url: Text<'a> = "url",
        title: Text<'a> = "title",
        name: Text<'a> = "name",
    }
}

impl<'a> ResponseBody<'a> {
    /// Reads `bytes`; fails only when they are not JSON.
    pub fn parse(bytes: &'a [u8]) -> serde_json::Result<Self> {
        serde_json::from_slice(bytes)
    }
}

#[cfg(test)]
mod tests;
