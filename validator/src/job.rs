//! A prepared run: the options checked, the targets named, the plan and the baseline.

use crate::baseline::Baseline;
use crate::checks::auth;
use crate::checks::plan::{AuthTokens, Plan, ALL};
use crate::cli::ValidateArgs;
use crate::schema::{self, LATEST};
use crate::target::{self, Target};
use crate::{http, redact};

/// A prepared run.
pub(crate) struct Job {
    pub(crate) targets: Vec<(String, Option<String>, Target)>,
    pub(crate) plan: Plan,
    pub(crate) strict: bool,
    pub(crate) baseline: Baseline,
    /// No `--revision`: 2026-07-28 if the server speaks it, 2025-11-25 if it answers `initialize`.
    pub(crate) auto: bool,
    /// The config file, whose entries may name tools to call (`callTools`).
    pub(crate) config: Option<std::path::PathBuf>,
    /// `--oauth`: the public client id the token is obtained as.
    pub(crate) oauth: Option<String>,
    /// Who plays the user agent of `--oauth`'s grant (`--oauth-browser`: a person).
    pub(crate) user_agent: crate::oauth::UserAgent,
    /// `--authorization-server`: the one target is an authorization server, judged on its own.
    pub(crate) authorization_server: bool,
}

/// Checks that `url`, given with `option`, is an http or https URL (a text that does not
/// parse is not shown: it may hold credentials).
fn check_url(option: &str, url: &str) -> Result<(), String> {
    match url::Url::parse(url) {
        Ok(parsed)
            if matches!(parsed.scheme(), "http" | "https") && parsed.host_str().is_some() =>
        {
            Ok(())
        }
        Ok(parsed) => Err(format!(
            "{option} {} is not an http or https URL",
            redact::public_url(parsed.as_str())
        )),
        Err(e) => Err(format!("{option} is not a valid URL: {e}")),
    }
}

/// Checks the options and prepares the run: the targets, the plan, the baseline.
pub(crate) fn prepare(args: &ValidateArgs) -> Result<Job, String> {
    let modes = usize::from(!args.command.is_empty())
        + usize::from(args.url.is_some())
        + usize::from(args.config.is_some())
        + usize::from(args.authorization_server.is_some());
    if modes != 1 {
        return Err(
            "name one server: a command after `--`, --url URL, --config FILE [NAME...], or --authorization-server URL".into(),
        );
    }
    if !args.names.is_empty() && args.config.is_none() {
        return Err(format!(
            "`{}` given without --config (a command goes after `--`)",
            args.names[0]
        ));
    }
    if !args.env.is_empty() && args.command.is_empty() {
        return Err("--env applies to a command given after `--`".into());
    }
    if !args.headers.is_empty() && args.url.is_none() {
        return Err("--header applies to --url".into());
    }
    if args.oauth.is_some() {
        if args.url.is_none() && args.authorization_server.is_none() {
            return Err("--oauth applies to --url and --authorization-server".into());
        }
        if args.headers.iter().any(|h| {
            h.split_once(':')
                .is_some_and(|(name, _)| name.trim().eq_ignore_ascii_case("authorization"))
        }) {
            return Err(
                "--oauth obtains the token an `Authorization` --header gives: use one of them"
                    .into(),
            );
        }
    }
    if args.oauth_browser && (args.oauth.is_none() || args.url.is_none()) {
        return Err("--oauth-browser applies to --oauth CLIENT_ID with --url".into());
    }
    if args.oauth_redirect_port.is_some() && !args.oauth_browser {
        return Err("--oauth-redirect-port applies to --oauth-browser".into());
    }
    for (option, token) in [
        ("--token-for-other-resource", &args.token_for_other_resource),
        ("--token-without-scope", &args.token_without_scope),
    ] {
        let Some(token) = token else { continue };
        if args.url.is_none() {
            return Err(format!("{option} applies to --url"));
        }
        if token.is_empty()
            || http::check_headers(&[("Authorization".into(), format!("Bearer {token}"))]).is_err()
        {
            return Err(format!(
                "{option} is not a token that fits a header value (not shown)"
            ));
        }
        redact::header_value(token);
    }
    let ca_cert = match &args.ca_cert {
        Some(_) if !args.command.is_empty() => {
            return Err("--ca-cert applies to https targets (--url or --config)".into())
        }
        Some(path) => {
            let pem = mcp_mock_servers::files::read_capped(
                path,
                mcp_mock_servers::files::MAX_INPUT_BYTES,
            )
            .map_err(|e| format!("cannot read --ca-cert {}: {e}", path.display()))?;
            http::check_ca_cert(&pem).map_err(|e| format!("--ca-cert {} {e}", path.display()))?;
            Some(pem)
        }
        None => None,
    };
    for revision in &args.revisions {
        if !schema::REVISIONS.contains(&revision.as_str()) && revision != schema::STATELESS {
            return Err(format!(
                "--revision `{revision}` is not one of {}, {}",
                schema::REVISIONS.join(", "),
                schema::STATELESS
            ));
        }
    }
    // An authorization server on its own has its checks; an MCP server all the others.
    let of_target = |id: &&str| match args.authorization_server {
        Some(_) => auth::SERVER_CHECKS.contains(id),
        None => *id != auth::GRANT,
    };
    let selected: Vec<&'static str> = ALL
        .iter()
        .copied()
        .filter(of_target)
        .filter(|id| args.only.is_empty() || args.only.iter().any(|p| id.starts_with(p.as_str())))
        .collect();
    if selected.is_empty() {
        return Err(match &args.authorization_server {
            Some(_) => format!(
                "--only {} matches no check of an authorization server ({})",
                args.only.join(", "),
                auth::SERVER_CHECKS.join(", ")
            ),
            None => format!(
                "--only {} matches no check (they start with `server.`)",
                args.only.join(", ")
            ),
        });
    }
    let baseline = match &args.baseline {
        Some(path) => Baseline::load(path, ALL)?,
        None => Baseline::default(),
    };
    for (_, value) in target::parse_env(&args.env).unwrap_or_default() {
        redact::env_value(&value);
    }
    let targets: Vec<(String, Option<String>, Target)> = if let Some(config) = &args.config {
        target::load_config(config, &args.names)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|(name, target)| (name.clone(), Some(name), target))
            .collect()
    } else if let Some(issuer) = &args.authorization_server {
        redact::url(issuer);
        check_url("--authorization-server", issuer)?;
        let target = Target::Http {
            url: issuer.clone(),
            headers: Vec::new(),
        };
        vec![(target.describe(), None, target)]
    } else if let Some(url) = &args.url {
        redact::url(url);
        check_url("--url", url)?;
        let headers = target::parse_headers(&args.headers).map_err(|e| e.to_string())?;
        for (_, value) in &headers {
            redact::header_value(value);
        }
        http::check_headers(&headers)?;
        let target = Target::Http {
            url: url.clone(),
            headers,
        };
        vec![(target.describe(), None, target)]
    } else {
        let env = target::parse_env(&args.env).map_err(|e| e.to_string())?;
        let target = Target::Stdio {
            command: args.command[0].clone(),
            args: args.command[1..].to_vec(),
            env,
        };
        vec![(target.describe(), None, target)]
    };
    for (_, _, target) in &targets {
        match target {
            Target::Http { url, headers } => {
                redact::url(url);
                headers
                    .iter()
                    .for_each(|(_, value)| redact::header_value(value));
            }
            Target::Stdio { env, .. } => env.iter().for_each(|(_, value)| redact::env_value(value)),
        }
    }
    let mut revisions = args.revisions.clone();
    revisions.dedup();
    let auto = revisions.is_empty();
    if auto {
        revisions = vec![schema::STATELESS.to_string(), LATEST.to_string()];
    }
    let plan = Plan {
        selected,
        revisions,
        timeout: args.timeout,
        ca_cert,
        call_tools: args.call_tools.clone(),
        probed: None,
        patience: None,
        probe_status: None,
        tokens: AuthTokens {
            other_resource: args.token_for_other_resource.clone(),
            without_scope: args.token_without_scope.clone(),
        },
    };
    Ok(Job {
        targets,
        plan,
        strict: args.strict,
        baseline,
        auto,
        config: args.config.clone(),
        oauth: args.oauth.clone(),
        user_agent: match args.oauth_browser {
            true => crate::oauth::UserAgent::Browser {
                port: args.oauth_redirect_port.unwrap_or(0),
                wait: args.oauth_wait,
            },
            false => crate::oauth::UserAgent::Headless,
        },
        authorization_server: args.authorization_server.is_some(),
    })
}
