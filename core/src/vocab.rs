//! The shared vocabulary: the names of answer styles, verbosities and reasoning efforts.
//!
//! Configuration, tool schemas and argument checks all read these tables, so a name is
//! written once.

use std::fmt;

macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[allow(missing_docs)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            /// Every accepted spelling, in declaration order.
            pub const NAMES: [&'static str; [$($text),+].len()] = [$($text),+];
            /// Every value, in declaration order.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the wire spelling.
            pub fn parse(s: &str) -> Option<Self> {
                Self::ALL.into_iter().find(|v| v.as_str() == s)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum!(
    /// How the answer is laid out.
    Style { Summary = "summary", Bullets = "bullets", CitationsOnly = "citations-only" }
);
string_enum!(
    /// `text.verbosity`.
    Verbosity { Low = "low", Medium = "medium", High = "high" }
);
string_enum!(
    /// `reasoning.effort`.
    Effort {
        /// No reasoning tokens.
        None = "none", Minimal = "minimal", Low = "low", Medium = "medium", High = "high",
        /// Above high.
        Xhigh = "xhigh", Max = "max",
    }
);
string_enum!(
    /// `search_context_size` of the web_search tool.
    SearchContextSize { Low = "low", Medium = "medium", High = "high" }
);
string_enum!(
    /// `service_tier`: how OpenAI processes the request.
    ServiceTier {
        Auto = "auto", Default = "default", Flex = "flex", Scale = "scale",
        Priority = "priority", Fast = "fast", Ultrafast = "ultrafast",
    }
);
