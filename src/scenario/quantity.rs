//! Kubernetes resource quantities: `100Mi`, `2`, `500m`, `1Gi`, `1e3`, `1k`, `0.5`.

/// A parsed non-negative quantity, exact: `mantissa × 10^exp10 × 2^pow2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    mantissa: u128,
    exp10: i32,
    pow2: u32,
}

impl Quantity {
    /// Parses a quantity (`<number><suffix>`, suffix one of the binary-SI `Ki Mi Gi Ti Pi Ei`,
    /// decimal-SI `n u m k M G T P E`, or a decimal exponent `e3`/`E-2`). Negative quantities
    /// are rejected: podsim has no use for them.
    pub fn parse(s: &str) -> Result<Quantity, String> {
        let bad = || format!("`{s}` is not a quantity (expected e.g. `100Mi`, `1Gi`, `500m`, `2`)");
        let t = s.trim();
        let body = match t.as_bytes().first() {
            Some(b'-') => return Err(format!("`{s}` is negative")),
            Some(b'+') => &t[1..],
            _ => t,
        };
        let num_len = body
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        let (num, suffix) = body.split_at(num_len);
        let (int, frac) = num.split_once('.').unwrap_or((num, ""));
        if int.is_empty() && frac.is_empty() || frac.contains('.') {
            return Err(bad());
        }
        let digits = format!("{int}{frac}");
        let digits = digits.trim_start_matches('0');
        if digits.len() > 30 {
            return Err(format!("`{s}` has too many digits"));
        }
        let mantissa: u128 = if digits.is_empty() {
            0
        } else {
            digits.parse().map_err(|_| bad())?
        };
        let mut q = Quantity {
            mantissa,
            exp10: -(frac.len() as i32),
            pow2: 0,
        };
        match suffix {
            "" => {}
            "Ki" => q.pow2 = 10,
            "Mi" => q.pow2 = 20,
            "Gi" => q.pow2 = 30,
            "Ti" => q.pow2 = 40,
            "Pi" => q.pow2 = 50,
            "Ei" => q.pow2 = 60,
            "n" => q.exp10 -= 9,
            "u" => q.exp10 -= 6,
            "m" => q.exp10 -= 3,
            "k" => q.exp10 += 3,
            "M" => q.exp10 += 6,
            "G" => q.exp10 += 9,
            "T" => q.exp10 += 12,
            "P" => q.exp10 += 15,
            "E" => q.exp10 += 18,
            _ => {
                let exp = suffix
                    .strip_prefix(['e', 'E'])
                    .filter(|e| !e.is_empty() && e.len() <= 4)
                    .and_then(|e| e.parse::<i32>().ok())
                    .ok_or_else(bad)?;
                q.exp10 += exp;
            }
        }
        Ok(q)
    }

    /// The value × 10^`scale`, rounded up to an integer (as Kubernetes rounds quantities up),
    /// or `None` if it does not fit in a u64.
    pub fn scaled_ceil(self, scale: i32) -> Option<u64> {
        if self.mantissa == 0 {
            return Some(0);
        }
        let mut v = self.mantissa.checked_mul(1u128.checked_shl(self.pow2)?)?;
        let e = self.exp10 + scale;
        if e >= 0 {
            v = v.checked_mul(10u128.checked_pow(e as u32)?)?;
        } else {
            let d = 10u128.checked_pow(e.unsigned_abs());
            v = match d {
                Some(d) => v.div_ceil(d),
                None => 1, // divisor beyond u128: a positive value this small rounds up to 1
            };
        }
        u64::try_from(v).ok()
    }

    /// Whole units (bytes, pods), rounded up.
    pub fn value(self) -> Option<u64> {
        self.scaled_ceil(0)
    }

    /// Thousandths (CPU millicores), rounded up.
    pub fn milli(self) -> Option<u64> {
        self.scaled_ceil(3)
    }
}

#[cfg(test)]
mod tests {
    use super::Quantity;

    fn v(s: &str) -> u64 {
        Quantity::parse(s).unwrap().value().unwrap()
    }
    fn m(s: &str) -> u64 {
        Quantity::parse(s).unwrap().milli().unwrap()
    }

    #[test]
    fn kubernetes_examples() {
        assert_eq!(v("100Mi"), 100 * 1024 * 1024);
        assert_eq!(v("1Gi"), 1 << 30);
        assert_eq!(v("16Gi"), 16 << 30);
        assert_eq!(v("2"), 2);
        assert_eq!(v("1e3"), 1000);
        assert_eq!(v("1E3"), 1000);
        assert_eq!(v("1k"), 1000);
        assert_eq!(v("1M"), 1_000_000);
        assert_eq!(v("1.5Gi"), 3 << 29);
        assert_eq!(v("0"), 0);
        assert_eq!(v("+5"), 5);
        assert_eq!(m("500m"), 500);
        assert_eq!(m("2"), 2000);
        assert_eq!(m("0.1"), 100);
        assert_eq!(m(".5"), 500);
        assert_eq!(m("1u"), 1); // rounds up
        assert_eq!(v("500m"), 1); // rounds up
        assert_eq!(m("1e-3"), 1);
        assert_eq!(v("1e-40"), 1);
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            "", "Mi", "1.2.3", "1MB", "1mi", "-1", "abc", "1e", "1e99999", "1 Gi", ".",
        ] {
            assert!(Quantity::parse(bad).is_err(), "{bad} accepted");
        }
        assert_eq!(Quantity::parse("100Ei").unwrap().value(), None);
    }
}
