//! Go duration strings (`time.ParseDuration`): `500ms`, `10s`, `1m30s`, `1.5h`, `0`.

/// Parses a Go duration into signed nanoseconds. Units: `ns`, `us` (`µs`, `μs`), `ms`, `s`,
/// `m`, `h`; a bare `0` (with optional sign) is zero. Fractions are truncated to whole
/// nanoseconds as Go does. The error is a complete sentence for the user.
pub fn parse_go_duration(s: &str) -> Result<i128, String> {
    parse(s, true)
}

/// [`parse_go_duration`]; `suggest`: whether a missing unit may be answered with a
/// suggestion (checked by parsing it, without suggesting again).
fn parse(s: &str, suggest: bool) -> Result<i128, String> {
    let bad = || format!("`{s}` is not a duration (expected e.g. `500ms`, `10s`, `1m30s`, `1h`)");
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if body == "0" {
        return Ok(0);
    }
    if body.is_empty() {
        return Err(bad());
    }
    let mut total: i128 = 0;
    let mut rest = body;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let int_part = &rest[..int_len];
        rest = &rest[int_len..];
        let mut frac_part = "";
        if let Some(r) = rest.strip_prefix('.') {
            let n = r.bytes().take_while(u8::is_ascii_digit).count();
            frac_part = &r[..n];
            rest = &r[n..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(bad());
        }
        let unit_len = rest
            .char_indices()
            .find(|(_, c)| c.is_ascii_digit() || *c == '.')
            .map_or(rest.len(), |(i, _)| i);
        let unit: i128 = match &rest[..unit_len] {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" if suggest && parse(&format!("{s}s"), false).is_ok() => {
                return Err(format!("`{s}` is missing a unit (e.g. `{s}s`)"))
            }
            "" => return Err(bad()),
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        let int: i128 = if int_part.is_empty() {
            0
        } else if int_part.len() > 20 {
            return Err(format!("`{s}` is too large"));
        } else {
            int_part.parse().map_err(|_| bad())?
        };
        let mut value = int * unit;
        // Fraction: digits * unit / 10^len, truncated (only the first 18 digits matter).
        let frac = &frac_part[..frac_part.len().min(18)];
        if !frac.is_empty() {
            let digits: i128 = frac.parse().map_err(|_| bad())?;
            value += digits * unit / 10i128.pow(frac.len() as u32);
        }
        total += value;
        if total > i128::from(u64::MAX) {
            return Err(format!("`{s}` is too large"));
        }
    }
    Ok(if neg { -total } else { total })
}

#[cfg(test)]
mod tests {
    use super::parse_go_duration as p;

    #[test]
    fn go_examples() {
        assert_eq!(p("0"), Ok(0));
        assert_eq!(p("0s"), Ok(0));
        assert_eq!(p("-0"), Ok(0));
        assert_eq!(p("500ms"), Ok(500_000_000));
        assert_eq!(p("10s"), Ok(10_000_000_000));
        assert_eq!(p("1m30s"), Ok(90_000_000_000));
        assert_eq!(p("1h"), Ok(3_600_000_000_000));
        assert_eq!(p("1.5h"), Ok(5_400_000_000_000));
        assert_eq!(p(".5s"), Ok(500_000_000));
        assert_eq!(p("1.s"), Ok(1_000_000_000));
        assert_eq!(p("2h45m0.5s"), Ok(9_900_500_000_000));
        assert_eq!(p("1µs"), Ok(1_000));
        assert_eq!(p("3us1ns"), Ok(3_001));
        assert_eq!(p("-1s"), Ok(-1_000_000_000));
        assert_eq!(p("+2ms"), Ok(2_000_000));
        assert_eq!(p("0.000000001s"), Ok(1));
        assert_eq!(p("0.0000000019s"), Ok(1));
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            "", "s", "10", "1.5", "10x", "1sm", ".s", "-", "1 s", "ten s", "10S", "1d",
        ] {
            assert!(p(bad).is_err(), "{bad} accepted");
        }
        assert!(p("10").unwrap_err().contains("missing a unit (e.g. `10s`)"));
        for bad in ["1.5.3", "1.5.3s", "1s1.5.", "5124096h1"] {
            let m = p(bad).unwrap_err();
            assert!(!m.contains(&format!("`{bad}s`")), "{bad}: {m}");
        }
        assert!(p("1.5.3s")
            .unwrap_err()
            .contains("is not a duration (expected e.g."));
        assert!(p("99999999999999999999999h").is_err());
        assert!(p("5124096h").is_err()); // beyond u64 nanoseconds
    }
}
