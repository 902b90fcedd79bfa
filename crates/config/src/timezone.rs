//! The configured time zone (`docs/formats.md#the-configured-time-zone`, decision D7).

use jiff::tz::TimeZone;

/// Resolves the zone: `configured` (an IANA name, `UTC` or `local`), else `tz_env` (the `TZ`
/// variable: an IANA name, optionally with a leading `:`, or a POSIX TZ string such as `IST-5:30`),
/// else the system zone, else UTC. Returns the zone and a display name.
///
/// # Errors
/// [`UnknownTimezone`] when `configured` is not a known zone (the caller names the key and
/// source).
pub fn resolve_timezone(
    configured: Option<&str>,
    tz_env: Option<&str>,
) -> Result<(TimeZone, String), UnknownTimezone> {
    match configured.map(str::trim).filter(|s| !s.is_empty()) {
        Some(name) if name.eq_ignore_ascii_case("local") => Ok(system_zone(tz_env)),
        Some(name) if name.eq_ignore_ascii_case("utc") => Ok((TimeZone::UTC, "UTC".into())),
        Some(name) => TimeZone::get(name)
            .map(|tz| (tz, name.to_owned()))
            .map_err(|source| UnknownTimezone {
                name: name.to_owned(),
                source,
            }),
        None => Ok(system_zone(tz_env)),
    }
}

/// A configured `timezone` that names no known zone.
#[derive(Debug, thiserror::Error)]
#[error("unknown time zone {name:?}: {source}")]
pub struct UnknownTimezone {
    /// The name as configured (trimmed).
    pub name: String,
    /// Why the zone database has no such zone.
    #[source]
    pub source: jiff::Error,
}

fn system_zone(tz_env: Option<&str>) -> (TimeZone, String) {
    if let Some(raw) = tz_env.map(str::trim).filter(|s| !s.is_empty()) {
        let name = raw.strip_prefix(':').unwrap_or(raw);
        if let Ok(tz) = TimeZone::get(name) {
            return (tz, name.to_owned());
        }
        if let Ok(tz) = TimeZone::posix(name) {
            return (tz, name.to_owned());
        }
    }
    match TimeZone::try_system() {
        Ok(tz) => {
            let name = tz.iana_name().unwrap_or("local").to_owned();
            (tz, name)
        }
        Err(_) => (TimeZone::UTC, "UTC".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posix_and_iana() {
        let (tz, name) = resolve_timezone(None, Some("IST-5:30")).unwrap();
        assert_eq!(name, "IST-5:30");
        let t: jiff::Timestamp = "2026-03-15T23:40:03Z".parse().unwrap();
        assert_eq!(t.to_zoned_datetime(tz).offset().seconds(), 19800);
        assert_eq!(
            resolve_timezone(Some("Asia/Kolkata"), Some("UTC0"))
                .unwrap()
                .1,
            "Asia/Kolkata"
        );
        assert_eq!(
            resolve_timezone(Some("Mars/Base"), None).unwrap_err().name,
            "Mars/Base"
        );
        assert_eq!(resolve_timezone(Some("utc"), None).unwrap().1, "UTC");
    }
}
