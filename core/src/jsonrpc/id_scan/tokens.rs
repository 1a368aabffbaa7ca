//! The tokens the id scan reads byte by byte: what a string is to it and where in its
//! escapes it stands, where in a number it is (RFC 8259, section 6), and the first bytes
//! of a top-level key.

/// What a string is to the scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Str {
    Skipped,
    /// A key of an object inside the message.
    SkippedKey,
    /// A key of the top-level object.
    Key,
    /// The top-level `id`.
    Id,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Escape {
    No,
    /// After `\`.
    Backslash,
    /// Inside `\uXXXX`: digits read, and their value so far.
    Hex(u8, u16),
}

/// Where in a number the scan is (RFC 8259, section 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    E,
    ESign,
    Exp,
}

/// The first bytes of a top-level key: enough to tell `id` from any other.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Key {
    bytes: [u8; 2],
    len: u8,
    long: bool,
}

impl Key {
    pub(super) fn push(&mut self, b: u8) {
        match self.bytes.get_mut(usize::from(self.len)) {
            Some(slot) if !self.long => {
                *slot = b;
                self.len += 1;
            }
            _ => self.long = true,
        }
    }

    pub(super) fn is_id(&self) -> bool {
        !self.long && self.len == 2 && self.bytes == *b"id"
    }
}

/// The state after `b` in a number at `num`, or `None` when `b` is not part of it.
pub(super) fn num_next(num: Num, b: u8) -> Option<Num> {
    let digit = b.is_ascii_digit();
    match (num, b) {
        (Num::Minus, b'0') => Some(Num::Zero),
        (Num::Minus, _) if digit => Some(Num::Int),
        (Num::Int, _) if digit => Some(Num::Int),
        (Num::Zero | Num::Int, b'.') => Some(Num::Dot),
        (Num::Dot | Num::Frac, _) if digit => Some(Num::Frac),
        (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => Some(Num::E),
        (Num::E, b'+' | b'-') => Some(Num::ESign),
        (Num::E | Num::ESign | Num::Exp, _) if digit => Some(Num::Exp),
        _ => None,
    }
}
