//! Input files as text: podsim reads UTF-8. A file that is not (invalid UTF-8, or UTF-16
//! as some Windows editors write it) is reported at the line:column of its first bad byte,
//! instead of an I/O error without a position.

/// Why bytes are not a podsim file's text, and where (1-based; the column counts
/// characters, as YAML positions do).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadText {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

/// The UTF-16 flavour `bytes` look like, if any: a byte-order mark, or (without one) ASCII
/// text with a zero byte beside every character among the first ones.
fn utf16(bytes: &[u8]) -> Option<&'static str> {
    match bytes {
        [0xFF, 0xFE, ..] => return Some("UTF-16 (little-endian, with a byte-order mark)"),
        [0xFE, 0xFF, ..] => return Some("UTF-16 (big-endian, with a byte-order mark)"),
        _ => {}
    }
    let head = &bytes[..bytes.len().min(64) & !1];
    if head.is_empty() {
        return None;
    }
    let pairs = || head.chunks_exact(2);
    if pairs().all(|p| p[1] == 0 && p[0] != 0 && p[0].is_ascii()) {
        Some("UTF-16 (little-endian)")
    } else if pairs().all(|p| p[0] == 0 && p[1] != 0 && p[1].is_ascii()) {
        Some("UTF-16 (big-endian)")
    } else {
        None
    }
}

/// Line and column (1-based, counting characters) of byte `at` of `valid`, the text before it.
fn position(valid: &str) -> (usize, usize) {
    let line = valid.matches('\n').count() + 1;
    let last = valid.rfind('\n').map_or(valid, |i| &valid[i + 1..]);
    (line, last.chars().count() + 1)
}

/// `bytes` as UTF-8 text, or where and why they are not. A NUL byte counts as bad: YAML
/// forbids it, and it is how UTF-16 text looks to a UTF-8 reader.
pub fn decode(bytes: &[u8]) -> Result<String, BadText> {
    let at = match std::str::from_utf8(bytes) {
        Ok(s) => match s.find('\0') {
            None => return Ok(s.to_owned()),
            Some(i) => i,
        },
        Err(e) => {
            let valid = &bytes[..e.valid_up_to()];
            valid.iter().position(|b| *b == 0).unwrap_or(valid.len())
        }
    };
    // Everything before `at` is valid UTF-8 (it is a prefix of the valid part).
    let before = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
    let (line, col) = position(before);
    let message = match utf16(bytes) {
        Some(kind) => format!(
            "the file is {kind}; podsim reads UTF-8: convert it (e.g. `iconv -f UTF-16 -t UTF-8`)"
        ),
        None if bytes[at] == 0 => {
            "a NUL byte (0x00): a podsim file is UTF-8 text, and YAML forbids NUL".to_owned()
        }
        None => format!(
            "invalid UTF-8 (byte 0x{:02X}): podsim reads UTF-8 text; re-save the file as UTF-8",
            bytes[at]
        ),
    };
    Err(BadText { line, col, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(bytes: &[u8]) -> (usize, usize, String) {
        let e = decode(bytes).unwrap_err();
        (e.line, e.col, e.message)
    }

    #[test]
    fn utf8_passes_through() {
        assert_eq!(decode("a: é\n".as_bytes()).unwrap(), "a: é\n");
        assert_eq!(decode(b"").unwrap(), "");
    }

    #[test]
    fn invalid_utf8_is_located() {
        let mut text = "a: 1\nbé: ".as_bytes().to_vec();
        text.extend(b"\xff\n");
        let (l, c, m) = bad(&text);
        assert_eq!((l, c), (2, 5), "{m}");
        assert!(m.contains("invalid UTF-8 (byte 0xFF)"), "{m}");
        let (l, c, m) = bad(b"a: 1\n\x00");
        assert_eq!((l, c), (2, 1));
        assert!(m.contains("NUL"), "{m}");
    }

    #[test]
    fn utf16_is_named() {
        let le: Vec<u8> = "a: 1\n".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = "a: 1\n".encode_utf16().flat_map(u16::to_be_bytes).collect();
        let (l, c, m) = bad(&le);
        assert_eq!((l, c), (1, 2));
        assert!(
            m.contains("UTF-16 (little-endian)") && m.contains("reads UTF-8"),
            "{m}"
        );
        let (l, c, m) = bad(&be);
        assert_eq!((l, c), (1, 1));
        assert!(m.contains("UTF-16 (big-endian)"), "{m}");
        let mut bom = vec![0xFF, 0xFE];
        bom.extend(&le);
        let (l, c, m) = bad(&bom);
        assert_eq!((l, c), (1, 1));
        assert!(m.contains("with a byte-order mark"), "{m}");
    }
}
