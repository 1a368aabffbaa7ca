//! The `id` of a refused caller's JSON-RPC message, read as its body streams past.
//!
//! A refusal still answers the request it refuses, so that a client matching errors to
//! its requests by id (the Python SDK) shows the reason. But nothing of a caller nobody
//! admitted may be built or held: the scan keeps an `id` that is an integer or a string
//! of at most [`MAX_ID`] bytes and a bit per open container, and skips every other
//! byte as it comes. No `Value` is built (a 3.8 MB `"id":[0,0,…]` once took 200 MB per
//! request as one).
//!
//! The body must be one JSON object with at most one top-level `id` for an id to be
//! found: the scan checks the grammar it skips (strings and their escapes, numbers,
//! literals, nesting, nothing after the object). It checks less than `serde_json` only
//! where checking would mean keeping more (the UTF-8 and surrogate pairs of strings it
//! skips, nesting past `serde_json`'s 128 levels): such a body may still get its id
//! echoed, never another id. Fuzz target `id_scan` holds it to `serde_json` on the whole
//! body, cut into any pieces (UTF-8 bodies under 64 KiB).

use super::id::RequestId;
use tokens::{num_next, Escape, Key, Num, Str};

#[path = "id_scan/tokens.rs"]
mod tokens;

/// The longest id kept, in bytes (an integer's digits, or a string's UTF-8).
pub const MAX_ID: usize = 256;
/// Containers open at once beyond which the body counts as unreadable (its bit stack
/// stays at most 8 KiB).
const MAX_DEPTH: usize = 1 << 16;

/// See the module docs: [`IdScan::feed`] the body's bytes in order, then
/// [`IdScan::finish`].
#[derive(Debug)]
pub struct IdScan {
    lex: Lex,
    /// One bit per open container, innermost last: set for an object.
    nest: Vec<u64>,
    depth: usize,
    /// The value that begins next is the top-level `id`'s.
    id_next: bool,
    id: Found,
    /// The top-level key being read: its first bytes, decoded.
    key: Key,
    /// The id's string as read so far, decoded.
    text: Vec<u8>,
    /// A high surrogate waiting for its low half, in a captured string.
    high: Option<u16>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lex {
    /// A value must come (the top, after `:`, after `,` in an array).
    Value,
    /// After `[`: a value or `]`.
    ArrayFirst,
    /// After `{`: a key or `}`.
    ObjectFirst,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value: `,`, the container's end, or the end of the body.
    After,
    Str(Str, Escape),
    /// A number, and whether it is the top-level `id`.
    Number(Num, bool),
    /// The bytes of `true`, `false` or `null` still to come.
    Literal(&'static [u8]),
    /// The top-level object ended: only whitespace may follow.
    Done,
    /// Not a JSON object as `serde_json` reads one: no id.
    Failed,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Found {
    Nothing,
    /// The id's string is being read (into `text`).
    Reading,
    Str(Vec<u8>),
    Int(Vec<u8>),
    /// `id` holds something that is no id (null, a fraction, a container, a long one).
    NotAnId,
    /// `id` came twice: `serde_json` refuses the message.
    Twice,
}

impl Default for IdScan {
    fn default() -> Self {
        IdScan::new()
    }
}

impl IdScan {
    /// A scan at the body's first byte.
    pub fn new() -> Self {
        IdScan {
            lex: Lex::Value,
            nest: Vec::new(),
            depth: 0,
            id_next: false,
            id: Found::Nothing,
            key: Key::default(),
            text: Vec::new(),
            high: None,
        }
    }

    /// The next bytes of the body.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some((&b, rest)) = bytes.split_first() {
            if self.lex == Lex::Failed {
                return;
            }
            if let Lex::Str(Str::Skipped | Str::SkippedKey, Escape::No) = self.lex {
                // The plain run of a skipped string, passed over at once.
                let plain = bytes
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                    .unwrap_or(bytes.len());
                if plain > 0 {
                    bytes = &bytes[plain..];
                    continue;
                }
            }
            self.byte(b);
            bytes = rest;
        }
    }

    /// The id, once the whole body was fed: `None` when the body is not one JSON object,
    /// or its `id` is missing, repeated, or neither an integer nor a string of at most
    /// [`MAX_ID`] bytes.
    pub fn finish(mut self) -> Option<RequestId> {
        // A number ends with the body.
        if let Lex::Number(num, _) = self.lex {
            self.end_number(num);
        }
        if self.lex != Lex::Done {
            return None;
        }
        match self.id {
            Found::Int(digits) => String::from_utf8(digits).ok().map(RequestId::Int),
            Found::Str(text) => String::from_utf8(text).ok().map(RequestId::Str),
            Found::Nothing | Found::Reading | Found::NotAnId | Found::Twice => None,
        }
    }

    fn byte(&mut self, b: u8) {
        match self.lex {
            Lex::Str(role, escape) => self.string_byte(role, escape, b),
            Lex::Number(num, is_id) => match num_next(num, b) {
                Some(next) => {
                    self.lex = Lex::Number(next, is_id);
                    if is_id {
                        self.capture(b);
                    }
                }
                None => {
                    self.end_number(num);
                    if self.lex != Lex::Failed {
                        // The byte after a number is the next token's.
                        self.byte(b);
                    }
                }
            },
            Lex::Literal(rest) => match rest.split_first() {
                Some((&want, rest)) if want == b => {
                    self.lex = Lex::Literal(rest);
                    if rest.is_empty() {
                        self.end_value();
                    }
                }
                _ => self.lex = Lex::Failed,
            },
            _ if matches!(b, b' ' | b'\t' | b'\n' | b'\r') => {}
            Lex::Value => self.begin_value(b),
            Lex::ArrayFirst if b == b']' => self.close(false),
            Lex::ArrayFirst => self.begin_value(b),
            Lex::ObjectFirst if b == b'}' => self.close(true),
            Lex::ObjectFirst | Lex::Key if b == b'"' => self.begin_key(),
            Lex::Colon if b == b':' => {
                self.id_next = self.depth == 1 && self.key.is_id();
                self.lex = Lex::Value;
            }
            Lex::After => match b {
                b',' if self.in_object() => self.lex = Lex::Key,
                b',' => self.lex = Lex::Value,
                b'}' => self.close(true),
                b']' => self.close(false),
                _ => self.lex = Lex::Failed,
            },
            _ => self.lex = Lex::Failed,
        }
    }

    fn begin_value(&mut self, b: u8) {
        let is_id = std::mem::take(&mut self.id_next);
        if self.depth == 0 && b != b'{' {
            // A message is an object.
            self.lex = Lex::Failed;
            return;
        }
        if is_id {
            self.id = match self.id {
                // What it is, the value's first byte tells.
                Found::Nothing => match b {
                    b'"' => Found::Reading,
                    b'-' | b'0'..=b'9' => Found::Int(Vec::new()),
                    _ => Found::NotAnId,
                },
                _ => Found::Twice,
            };
        }
        let capture = self.id == Found::Reading && is_id;
        match b {
            b'{' | b'[' => self.open(b == b'{'),
            b'"' => {
                self.text.clear();
                self.high = None;
                let role = if capture { Str::Id } else { Str::Skipped };
                self.lex = Lex::Str(role, Escape::No);
            }
            b'-' | b'0'..=b'9' => {
                let num = match b {
                    b'-' => Num::Minus,
                    b'0' => Num::Zero,
                    _ => Num::Int,
                };
                self.lex = Lex::Number(num, is_id);
                if is_id {
                    self.capture(b);
                }
            }
            b't' => self.lex = Lex::Literal(b"rue"),
            b'f' => self.lex = Lex::Literal(b"alse"),
            b'n' => self.lex = Lex::Literal(b"ull"),
            _ => self.lex = Lex::Failed,
        }
    }

    fn begin_key(&mut self) {
        self.high = None;
        if self.depth == 1 {
            self.key = Key::default();
            self.lex = Lex::Str(Str::Key, Escape::No);
        } else {
            self.lex = Lex::Str(Str::SkippedKey, Escape::No);
        }
    }

    fn open(&mut self, object: bool) {
        if self.depth >= MAX_DEPTH {
            self.lex = Lex::Failed;
            return;
        }
        let (word, bit) = (self.depth / 64, self.depth % 64);
        if word == self.nest.len() {
            self.nest.push(0);
        }
        if let Some(w) = self.nest.get_mut(word) {
            if object {
                *w |= 1 << bit;
            } else {
                *w &= !(1 << bit);
            }
        }
        self.depth += 1;
        self.lex = if object {
            Lex::ObjectFirst
        } else {
            Lex::ArrayFirst
        };
    }

    fn in_object(&self) -> bool {
        let Some(top) = self.depth.checked_sub(1) else {
            return false;
        };
        self.nest
            .get(top / 64)
            .is_some_and(|w| w & (1 << (top % 64)) != 0)
    }

    fn close(&mut self, object: bool) {
        if self.depth == 0 || self.in_object() != object {
            self.lex = Lex::Failed;
            return;
        }
        self.depth -= 1;
        self.end_value();
    }

    fn end_value(&mut self) {
        self.lex = if self.depth == 0 {
            Lex::Done
        } else {
            Lex::After
        };
    }

    fn end_number(&mut self, num: Num) {
        if !matches!(num, Num::Zero | Num::Int | Num::Frac | Num::Exp) {
            self.lex = Lex::Failed;
            return;
        }
        self.end_value();
    }

    /// A byte of the number being read, kept while it may still be the id (an integer
    /// of at most [`MAX_ID`] bytes).
    fn capture(&mut self, b: u8) {
        if let Found::Int(digits) = &mut self.id {
            if digits.len() < MAX_ID && (b == b'-' || b.is_ascii_digit()) {
                digits.push(b);
            } else {
                // A fraction, an exponent, or too many digits.
                self.id = Found::NotAnId;
            }
        }
    }

    fn string_byte(&mut self, role: Str, escape: Escape, b: u8) {
        match escape {
            Escape::No => match b {
                b'"' => self.end_string(role),
                b'\\' => self.lex = Lex::Str(role, Escape::Backslash),
                0..=0x1f => self.lex = Lex::Failed,
                _ => {
                    if self.high.is_some() {
                        // A high surrogate not followed by its low half.
                        self.lex = Lex::Failed;
                        return;
                    }
                    self.keep(role, b);
                }
            },
            Escape::Backslash => {
                let plain = match b {
                    b'"' | b'\\' | b'/' => b,
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'u' => {
                        self.lex = Lex::Str(role, Escape::Hex(0, 0));
                        return;
                    }
                    _ => {
                        self.lex = Lex::Failed;
                        return;
                    }
                };
                if self.high.is_some() {
                    self.lex = Lex::Failed;
                    return;
                }
                self.keep(role, plain);
                self.lex = Lex::Str(role, Escape::No);
            }
            Escape::Hex(n, value) => {
                let Some(digit) = (b as char).to_digit(16) else {
                    self.lex = Lex::Failed;
                    return;
                };
                // At most four digits: the value stays within 16 bits.
                let value = (value << 4) | digit as u16;
                if n < 3 {
                    self.lex = Lex::Str(role, Escape::Hex(n + 1, value));
                    return;
                }
                self.lex = Lex::Str(role, Escape::No);
                if matches!(role, Str::Key | Str::Id) {
                    self.code_unit(role, value);
                }
            }
        }
    }

    /// A `\uXXXX` of a decoded string: surrogates paired, the character kept as UTF-8.
    fn code_unit(&mut self, role: Str, unit: u16) {
        let c = match (self.high.take(), unit) {
            (None, 0xD800..=0xDBFF) => {
                self.high = Some(unit);
                return;
            }
            (Some(high), 0xDC00..=0xDFFF) => {
                let c = 0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
                char::from_u32(c)
            }
            (None, _) => char::from_u32(u32::from(unit)),
            (Some(_), _) => None,
        };
        let Some(c) = c else {
            // A lone surrogate: serde_json refuses the message.
            self.lex = Lex::Failed;
            return;
        };
        let mut utf8 = [0; 4];
        for &b in c.encode_utf8(&mut utf8).as_bytes() {
            self.keep(role, b);
        }
    }

    fn keep(&mut self, role: Str, b: u8) {
        match role {
            Str::Skipped | Str::SkippedKey => {}
            Str::Key => self.key.push(b),
            Str::Id if self.id == Found::Reading => {
                if self.text.len() < MAX_ID {
                    self.text.push(b);
                } else {
                    self.id = Found::NotAnId;
                    self.text = Vec::new();
                }
            }
            Str::Id => {}
        }
    }

    fn end_string(&mut self, role: Str) {
        if self.high.is_some() {
            self.lex = Lex::Failed;
            return;
        }
        match role {
            Str::Key | Str::SkippedKey => {
                self.lex = Lex::Colon;
                return;
            }
            Str::Id if self.id == Found::Reading => {
                self.id = Found::Str(std::mem::take(&mut self.text));
            }
            Str::Id | Str::Skipped => {}
        }
        self.end_value();
    }
}

#[cfg(test)]
#[path = "id_scan_tests.rs"]
mod tests;
