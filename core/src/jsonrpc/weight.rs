//! What a JSON message would build, weighed before it is parsed: an admitted caller's
//! body becomes a `Value` (every member a node, every number its own text under
//! `arbitrary_precision`), so a 3.8 MB array of a million `0`s took 200 MB. Counting
//! the structure first costs one pass and no allocation.

/// Values (elements and members) a message may hold; a tool call's arguments hold a few
/// dozen.
pub const MAX_VALUES: usize = 16_384;
/// Containers open at once a message may hold.
pub const MAX_DEPTH: usize = 64;

/// A message too heavy to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TooHeavy {
    /// More than [`MAX_VALUES`] values.
    #[error("the message holds more than {MAX_VALUES} JSON values: send a smaller request (a tool call's arguments need a few dozen)")]
    Values,
    /// Deeper than [`MAX_DEPTH`].
    #[error("the message nests deeper than {MAX_DEPTH} levels: send a flatter request")]
    Depth,
}

/// Whether `body` stays within [`MAX_VALUES`] and [`MAX_DEPTH`], counting the `,`, `[`
/// and `{` outside strings (each starts a value). Malformed JSON is not judged here: the
/// parser refuses it after.
pub fn weigh(body: &[u8]) -> Result<(), TooHeavy> {
    let (mut values, mut depth) = (0usize, 0usize);
    let mut rest = body;
    while let Some(at) = rest
        .iter()
        .position(|&b| matches!(b, b'"' | b',' | b'[' | b'{' | b']' | b'}'))
    {
        let b = rest[at];
        rest = &rest[at + 1..];
        match b {
            b'"' => rest = after_string(rest),
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {
                values += 1;
                if values > MAX_VALUES {
                    return Err(TooHeavy::Values);
                }
                if b != b',' {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Err(TooHeavy::Depth);
                    }
                }
            }
        }
    }
    Ok(())
}

/// What follows the string whose opening quote was just passed (nothing, if it never
/// closes).
fn after_string(mut rest: &[u8]) -> &[u8] {
    while let Some(at) = rest.iter().position(|&b| b == b'"' || b == b'\\') {
        if rest[at] == b'"' {
            return &rest[at + 1..];
        }
        // An escape: the byte after the backslash is never the string's end.
        rest = rest.get(at + 2..).unwrap_or_default();
    }
    &[]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_messages_pass_and_huge_or_deep_ones_do_not() {
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"answer","arguments":{"query":"a \"quoted\" [,{ text","domains":["a.example","b.example"]}}}"#;
        assert_eq!(weigh(call), Ok(()));
        let mut wide = br#"{"id":1,"params":{"x":["#.to_vec();
        wide.extend(std::iter::repeat_n(*b"0,", MAX_VALUES).flatten());
        wide.extend_from_slice(b"0]}}");
        assert_eq!(weigh(&wide), Err(TooHeavy::Values));
        let deep = [vec![b'['; MAX_DEPTH + 1], vec![b']'; MAX_DEPTH + 1]].concat();
        assert_eq!(weigh(&deep), Err(TooHeavy::Depth));
        let at_depth = [vec![b'['; MAX_DEPTH], vec![b']'; MAX_DEPTH]].concat();
        assert_eq!(weigh(&at_depth), Ok(()));
        // Structure inside strings, escaped quotes included, is text.
        let mut texty = br#"{"q":""#.to_vec();
        texty.extend(std::iter::repeat_n(*b"[,\\\"", 100_000).flatten());
        texty.extend_from_slice(br#""}"#);
        assert_eq!(weigh(&texty), Ok(()));
        // An unclosed string or a trailing backslash ends the scan.
        assert_eq!(weigh(br#"{"q":"abc\"#), Ok(()));
    }
}
