//! The wall-clock time a report was taken, as `top` and `sample` stamp it: local time with its
//! offset from UTC, in RFC 3339 (`YYYY-MM-DDThh:mm:ss.mmm+01:00`), the one form both the text
//! header and the JSON `time` field use (a person reads local time; a script gets the offset).

use std::time::{SystemTime, UNIX_EPOCH};

/// `at` in local time, RFC 3339 with milliseconds and the UTC offset.
pub fn rfc3339_local(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = libc::time_t::try_from(since.as_secs()).unwrap_or(libc::time_t::MAX);
    // SAFETY: an all-zero `tm` is a valid value for localtime_r to fill in.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; localtime_r (unlike localtime) keeps no
    // shared state, so threads may call it at once.
    let filled = unsafe { libc::localtime_r(&secs, &mut tm) };
    if filled.is_null() {
        // No local time to be had: UTC, said as such.
        return format_utc(since.as_secs(), since.subsec_millis());
    }
    let offset_s = tm.tm_gmtoff;
    let sign = if offset_s < 0 { '-' } else { '+' };
    let off = offset_s.unsigned_abs();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{sign}{:02}:{:02}",
        i64::from(tm.tm_year) + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        since.subsec_millis(),
        off / 3600,
        off % 3600 / 60
    )
}

/// The text header's form: seconds, no milliseconds (`YYYY-MM-DDThh:mm:ss+01:00`).
pub fn header_time(rfc3339: &str) -> String {
    match (rfc3339.find('.'), rfc3339.rfind(['+', '-'])) {
        (Some(dot), Some(sign)) if sign > dot => format!("{}{}", &rfc3339[..dot], &rfc3339[sign..]),
        _ => rfc3339.to_owned(),
    }
}

/// UTC from seconds since the epoch (civil-from-days, proleptic Gregorian).
fn format_utc(secs: u64, millis: u32) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}+00:00",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn local_time_in_rfc3339_with_its_offset() {
        let at = UNIX_EPOCH + Duration::from_millis(1_795_000_000_123);
        let t = rfc3339_local(at);
        // YYYY-MM-DDT..., whatever the zone: date, time, millis, offset.
        let bytes = t.as_bytes();
        assert_eq!(t.len(), 29, "{t}");
        assert_eq!(
            (bytes[4], bytes[7], bytes[10], bytes[19]),
            (b'-', b'-', b'T', b'.')
        );
        assert!(t[20..23] == *"123", "{t}");
        assert!(matches!(bytes[23], b'+' | b'-') && bytes[26] == b':', "{t}");
        assert_eq!(header_time(&t).len(), 25, "{t}");
        assert!(!header_time(&t).contains('.'));
        assert_eq!(
            format_utc(1_795_000_000, 123),
            "2026-11-18T11:06:40.123+00:00"
        );
        assert_eq!(format_utc(0, 0), "1970-01-01T00:00:00.000+00:00");
    }
}
