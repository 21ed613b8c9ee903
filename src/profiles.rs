//! The profiles' commented defaults file, as the CLI prints it and a test checks it.

use mcp_refclient::Profile;

/// The defaults file, with its comments.
pub const DEFAULTS: &str = include_str!("profiles.toml");

/// The commented section of one profile (`[kova]` to the next section).
pub fn section(profile: Profile) -> String {
    let header = format!("[{}]", profile.name());
    let Some(start) = DEFAULTS.find(&header) else {
        return String::new();
    };
    let rest = &DEFAULTS[start..];
    let end = rest[header.len()..]
        .find("\n[")
        .map(|i| i + header.len() + 1)
        .unwrap_or(rest.len());
    rest[..end].trim_end().to_string() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ms(value: &toml::Value) -> Duration {
        Duration::from_millis(value.as_integer().expect("a number of milliseconds") as u64)
    }

    #[test]
    fn the_defaults_file_matches_the_client() {
        let file: toml::Table = toml::from_str(DEFAULTS).unwrap();
        for profile in Profile::ALL {
            let table = file[profile.name()].as_table().unwrap();
            let timeouts = profile.timeouts();
            assert_eq!(
                Some(ms(&table["handshake_timeout_ms"])),
                timeouts.handshake,
                "{profile:?}"
            );
            assert_eq!(
                Some(ms(&table["call_timeout_ms"])),
                timeouts.call,
                "{profile:?}"
            );
            assert_eq!(
                Some(ms(&table["list_timeout_ms"])),
                timeouts.list,
                "{profile:?}"
            );
            assert_eq!(
                ms(&table["idle_read_timeout_ms"]),
                timeouts.idle_read,
                "{profile:?}"
            );
            assert_eq!(
                ms(&table["connect_retry_delay_ms"]),
                timeouts.connect_retry_delay,
                "{profile:?}"
            );
            assert_eq!(
                ms(&table["exit_settle_ms"]),
                timeouts.exit_settle,
                "{profile:?}"
            );
            assert_eq!(
                table["protocol_version_stdio"].as_str(),
                Some(profile.stdio_protocol_version())
            );
            let stateless = mcp_refclient::ClientConfig::new(profile)
                .stateless_revision()
                .unwrap_or("none");
            assert_eq!(
                table["stateless_revision"].as_str(),
                Some(stateless),
                "{profile:?}"
            );
            assert_eq!(
                table["reads_only_during_calls"].as_bool(),
                Some(profile.reads_only_during_calls())
            );
            assert_eq!(
                table["sends_cancelled"].as_bool(),
                Some(profile.sends_cancelled())
            );
            assert_eq!(table["paginates"].as_bool(), Some(profile.paginates()));
            assert_eq!(table["reconnects"].as_bool(), Some(profile.reconnects()));
            assert_eq!(
                table["retries_connect"].as_bool(),
                Some(profile.retries_connect())
            );
            assert_eq!(
                table["caches_tools"].as_bool(),
                Some(profile.caches_tools())
            );
        }
        assert_eq!(file.len(), Profile::ALL.len(), "one section per profile");
    }

    #[test]
    fn a_section_holds_its_comments_and_stops_at_the_next() {
        let kova = section(Profile::Kova);
        assert!(kova.starts_with("[kova]\n# kova-sdk"));
        assert!(kova.contains("500ms backoff"));
        assert!(!section(Profile::Strict).contains("[yoagent]"));
    }
}
