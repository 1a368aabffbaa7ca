//! Standard Base64 decoding (RFC 4648 section 4, padding optional), for header values in
//! the `=?base64?…?=` sentinel form. No other use; a dependency would be more code.

/// The bytes `text` encodes, or `None` when it is not Base64.
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    let body = text
        .strip_suffix(b"==")
        .or_else(|| text.strip_suffix(b"="))
        .unwrap_or(text);
    if body.len() % 4 == 1 || (body.len() != text.len() && text.len() % 4 != 0) {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in body {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // Leftover bits must be zero, so that each text has one meaning.
    (acc == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn decodes_the_spec_examples_and_refuses_the_rest() {
        assert_eq!(
            decode("SGVsbG8sIOS4lueVjA==").unwrap(),
            "Hello, 世界".as_bytes()
        );
        assert_eq!(decode("IHBhZGRlZCA=").unwrap(), b" padded ");
        assert_eq!(decode("bGluZTEKbGluZTI=").unwrap(), b"line1\nline2");
        assert_eq!(
            decode("PT9iYXNlNjQ/bGl0ZXJhbD89").unwrap(),
            b"=?base64?literal?="
        );
        assert_eq!(decode("").unwrap(), b"");
        assert_eq!(decode("YQ").unwrap(), b"a");
        for bad in ["Y", "YQ=", "a b=", "YR==", "Zm9v!", "===="] {
            assert_eq!(decode(bad), None, "{bad}");
        }
    }
}
