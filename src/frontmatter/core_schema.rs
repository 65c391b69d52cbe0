//! Plain scalars resolved by the YAML 1.2 core schema exactly (FM-002;
//! YAML 1.2.2 §10.3.2): `017` is 17, `0o17` is 15, `yes` and `0b1` stay
//! strings, and an integer outside 64 bits is refused (FM-005).

use serde_yaml_ng::{Number, Value};

/// Resolves a plain scalar by the YAML 1.2 core schema (YAML 1.2.2
/// §10.3.2). `Err` only for an integer outside 64 bits.
pub(crate) fn core_resolve(s: &str) -> Result<Value, String> {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        ".nan" | ".NaN" | ".NAN" => return Ok(Value::Number(Number::from(f64::NAN))),
        _ => {}
    }
    let (sign, unsigned) = match s.as_bytes().first() {
        Some(b'-') => (-1.0, &s[1..]),
        Some(b'+') => (1.0, &s[1..]),
        _ => (1.0, s),
    };
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return Ok(Value::Number(Number::from(sign * f64::INFINITY)));
    }
    let range = || format!("the integer {s} is outside the 64-bit range");
    let digits = |t: &str, radix: u32| !t.is_empty() && t.chars().all(|c| c.is_digit(radix));
    if let Some(oct) = s.strip_prefix("0o").filter(|t| digits(t, 8)) {
        return u64::from_str_radix(oct, 8)
            .map(|n| Value::Number(n.into()))
            .map_err(|_| range());
    }
    if let Some(hex) = s.strip_prefix("0x").filter(|t| digits(t, 16)) {
        return u64::from_str_radix(hex, 16)
            .map(|n| Value::Number(n.into()))
            .map_err(|_| range());
    }
    if digits(unsigned, 10) {
        return if s.starts_with('-') {
            s.parse::<i64>()
                .map(|n| Value::Number(n.into()))
                .map_err(|_| range())
        } else {
            unsigned
                .parse::<u64>()
                .map(|n| Value::Number(n.into()))
                .map_err(|_| range())
        };
    }
    if is_core_float(unsigned)
        && let Ok(f) = unsigned.parse::<f64>()
    {
        return Ok(Value::Number(Number::from(sign * f)));
    }
    Ok(Value::String(s.to_owned()))
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, the sign already gone.
/// Rust's float parser reads what passes; this check keeps out what that
/// parser would take and the core schema leaves a string (`inf`, `nan`,
/// `infinity`, a second sign). Where the two agree (an empty fraction after
/// a bare dot, a malformed exponent) both refuse, so either check suffices.
fn is_core_float(s: &str) -> bool {
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => !frac.is_empty() && all_digits(frac),
        Some((int, frac)) => !int.is_empty() && all_digits(int) && all_digits(frac),
        None => !mantissa.is_empty() && all_digits(mantissa),
    };
    let exponent_ok = match exponent {
        None => true,
        Some(e) => {
            let e = e.strip_prefix(['-', '+']).unwrap_or(e);
            !e.is_empty() && all_digits(e)
        }
    };
    mantissa_ok && exponent_ok
}

#[cfg(test)]
mod tests {
    use crate::frontmatter::{FrontmatterError, parse};
    use rstest::rstest;
    use serde_yaml_ng::{Mapping, Number, Value};

    fn value_of(yaml: &str) -> Result<Value, FrontmatterError> {
        parse(&format!("k: {yaml}\n"), 2).map(|fm| fm.map.get("k").cloned().unwrap_or(Value::Null))
    }

    #[rstest]
    #[case("yes", Value::String("yes".into()))]
    #[case("no", Value::String("no".into()))]
    #[case("on", Value::String("on".into()))]
    #[case("off", Value::String("off".into()))]
    #[case("y", Value::String("y".into()))]
    #[case("True", Value::Bool(true))]
    #[case("FALSE", Value::Bool(false))]
    #[case("0o17", Value::Number(15.into()))]
    #[case("017", Value::Number(17.into()))]
    #[case("0x1F", Value::Number(31.into()))]
    #[case("0b101", Value::String("0b101".into()))]
    #[case("1_000", Value::String("1_000".into()))]
    #[case("-0x1F", Value::String("-0x1F".into()))]
    #[case("+12", Value::Number(12.into()))]
    #[case("-7", Value::Number((-7).into()))]
    #[case("~", Value::Null)]
    #[case("Null", Value::Null)]
    #[case("2001-12-14", Value::String("2001-12-14".into()))]
    #[case("1.10", Value::Number(Number::from(1.1)))]
    #[case("1e3", Value::Number(Number::from(1000.0)))]
    #[case(".5", Value::Number(Number::from(0.5)))]
    #[case("'017'", Value::String("017".into()))]
    #[case("\"yes\"", Value::String("yes".into()))]
    #[case("!!str 12", Value::String("12".into()))]
    #[case("!!int 12", Value::Number(12.into()))]
    #[case("!!float 1", Value::Number(Number::from(1.0)))]
    #[case("!!null ~", Value::Null)]
    #[case("!!bool TRUE", Value::Bool(true))]
    #[case("!!int -7", Value::Number((-7).into()))]
    #[case("!!int 18446744073709551615", Value::Number(u64::MAX.into()))]
    // What Rust's float parser would take but the core schema does not.
    #[case("inf", Value::String("inf".into()))]
    #[case("nan", Value::String("nan".into()))]
    #[case("+-1.5", Value::String("+-1.5".into()))]
    #[case("--1", Value::String("--1".into()))]
    fn plain_scalars_resolve_by_the_core_schema(#[case] yaml: &str, #[case] want: Value) {
        assert_eq!(value_of(yaml).unwrap(), want);
    }

    /// A collection may carry only its own core-schema tag.
    #[rstest]
    #[case("!!seq [1, 2]", Value::Sequence(vec![1.into(), 2.into()]))]
    #[case("!!map {x: 1}", Value::Mapping(Mapping::from_iter([("x".into(), 1.into())])))]
    fn collections_keep_their_own_core_tag(#[case] yaml: &str, #[case] want: Value) {
        assert_eq!(value_of(yaml).unwrap(), want);
    }

    #[test]
    fn infinities_and_nan_resolve() {
        assert_eq!(value_of(".inf").unwrap().as_f64(), Some(f64::INFINITY));
        assert_eq!(value_of("-.Inf").unwrap().as_f64(), Some(f64::NEG_INFINITY));
        assert!(value_of(".NaN").unwrap().as_f64().is_some_and(f64::is_nan));
    }
}
