//! Typed configuration, read from environment variables once per container.
//! A bad variable fails start-up with a message naming it; nothing on the
//! request path reads the environment.

use std::env;
use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

use crate::domain::OrgId;
use crate::store::{StoreConfig, StoreTimeouts};
pub use crate::telemetry::LogFormat;

/// Where the process runs: decides log format, Host allowlist and which
/// development conveniences may be switched on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Inside AWS Lambda (`AWS_LAMBDA_RUNTIME_API` is set).
    Lambda,
    /// A plain HTTP port on loopback (`make run`, tests).
    Local,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub mode: Mode,
    /// Local port (default 3000); unused on Lambda.
    pub port: u16,
    /// Canonical URI of the MCP endpoint (the token audience and the `resource` of the metadata).
    pub mcp_resource: String,
    /// Browser origins allowed to call; a request with any other `Origin` is refused.
    pub allowed_origins: Vec<String>,
    /// Extra `Host` values accepted besides the defaults of the mode.
    pub allowed_hosts: Vec<String>,
    pub log_format: LogFormat,
    /// Embedded Metric Format lines on stdout (`METRICS`; default on for
    /// Lambda, off locally).
    pub metrics: bool,
    pub auth: AuthConfig,
    pub store: StoreConfig,
    /// Requests per principal and workspace per minute; 0 disables the limit.
    pub rate_limit_per_minute: u32,
    /// The budget of a registered mail pipeline's ingestion (nothing else
    /// spends it): `INGEST_RATE_LIMIT_PER_MINUTE`, 0 for none.
    pub ingest_rate_limit_per_minute: u32,
    /// Local development issuer (never on Lambda).
    pub dev_issuer: Option<DevIssuerConfig>,
    /// Secrets that sign cursors and confirmations and seal webhook secrets;
    /// the first is current, all verify.
    /// Empty when `signing_secret_arn` names where they are (read at INIT).
    pub signing_secrets: Vec<String>,
    /// The Secrets Manager secret holding the signing secret (`SIGNING_SECRET_ARN`).
    pub signing_secret_arn: Option<String>,
    /// A local Secrets Manager-compatible server (`SECRETS_MANAGER_ENDPOINT`).
    pub secrets_endpoint: Option<String>,
    /// Webhook deliveries may go to loopback over plain HTTP (local runs and tests only).
    pub webhook_allow_loopback: bool,
    /// How long a destructive tool's confirmation request stays valid.
    pub confirmation_ttl_secs: u64,
    /// The deployment's cap on third-party text over MCP
    /// (`CONTENT_POLICY_CAP`: `full` — no cap, the default —,
    /// `verified_only` or `structured_only`): no workspace setting and no
    /// request gets more out (`domain::provenance`).
    pub content_policy_cap: crate::domain::provenance::ContentPolicy,
    /// The most one request may take before it is answered 503 with
    /// `Retry-After` (far inside the function's 25 s and API Gateway's 30 s).
    pub request_timeout: Duration,
    /// How long a job's lease protects it from another runner.
    pub job_lease_secs: u64,
    /// How long a person's workspace memberships are remembered per container:
    /// the delay before a revoked membership takes effect. Zero: never cached.
    pub membership_cache: Duration,
}

/// The request budget on Lambda and in `make run`.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_millis(4500);

/// The signing secret of `Config::local` (tests and tools that build their
/// own configuration). A server started from the environment never uses it:
/// locally it generates its own secret (`SIGNING_SECRET_FILE`), and on Lambda
/// this value is refused.
pub const LOCAL_SIGNING_SECRET: &str = "local-development-signing-secret-not-for-production";

/// Where a local run keeps its generated signing secret when `SIGNING_SECRET` is unset.
pub const DEFAULT_SIGNING_SECRET_FILE: &str = ".local/signing-secret";

#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// The trusted authorization server, exactly as its metadata's `issuer`.
    pub issuer: String,
    pub jwks_url: String,
    /// Audience of tokens for the REST API.
    pub api_audience: String,
    /// Audience of tokens for the MCP endpoint when the identity provider
    /// cannot put its resource URI in `aud` (`MCP_AUDIENCE`); `None`: the URI.
    pub mcp_audience: Option<String>,
    /// Where organization and scopes are found in a token.
    pub claims: crate::auth::claims::ClaimRules,
    /// Least time between two JWKS fetches on an unknown `kid`, and between
    /// two tries while the issuer cannot be reached.
    pub jwks_min_refresh: Duration,
    /// How long a fetched key set is trusted before the next request fetches
    /// it again (`JWKS_MAX_AGE_MINUTES`).
    pub jwks_max_age: Duration,
    /// The oldest a key set may grow while the issuer cannot be reached
    /// (`JWKS_MAX_STALE_MINUTES`); past it tokens are answered 503.
    pub jwks_max_stale: Duration,
}

/// The local development issuer: a signing key kept in a file, its JWKS
/// served on `127.0.0.1:port`.
#[derive(Debug, Clone)]
pub struct DevIssuerConfig {
    pub key_path: PathBuf,
    pub port: u16,
}

impl DevIssuerConfig {
    pub fn issuer(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn jwks_url(&self) -> String {
        format!("{}/jwks.json", self.issuer())
    }
}

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("{name} is invalid: {reason}")]
    Invalid { name: &'static str, reason: String },
}

fn var(name: &str) -> Option<String> {
    env::var(name).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

fn list(name: &str) -> Vec<String> {
    var(name).map(|v| v.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()).unwrap_or_default()
}

impl Config {
    pub fn from_env() -> Result<Config, ConfigError> {
        let mode = if var("AWS_LAMBDA_RUNTIME_API").is_some() { Mode::Lambda } else { Mode::Local };
        let port = match var("PORT") {
            None => 3000,
            Some(p) => p
                .parse()
                .map_err(|_| ConfigError::Invalid { name: "PORT", reason: format!("{p:?} is not a port number") })?,
        };
        let mcp_resource = match (var("MCP_RESOURCE"), mode) {
            (Some(r), _) => r,
            (None, Mode::Local) => format!("http://127.0.0.1:{port}/mcp"),
            (None, Mode::Lambda) => {
                return Err(ConfigError::Invalid { name: "MCP_RESOURCE", reason: "is required on Lambda".into() });
            }
        };
        validate_resource(&mcp_resource)?;
        let log_format = match var("LOG_FORMAT").as_deref() {
            Some("json") => LogFormat::Json,
            Some("pretty") => LogFormat::Pretty,
            None if mode == Mode::Lambda => LogFormat::Json,
            None => LogFormat::Pretty,
            Some(other) => {
                return Err(ConfigError::Invalid {
                    name: "LOG_FORMAT",
                    reason: format!("{other:?} is not json or pretty"),
                });
            }
        };
        let dev_issuer = match var("DEV_ISSUER_KEY") {
            None => None,
            Some(_) if mode == Mode::Lambda => {
                return Err(ConfigError::Invalid {
                    name: "DEV_ISSUER_KEY",
                    reason: "the development issuer is refused on Lambda".into(),
                });
            }
            Some(path) => Some(DevIssuerConfig { key_path: path.into(), port: parse_or("DEV_ISSUER_PORT", 3001)? }),
        };
        let (issuer, jwks_url) = match (var("OAUTH_ISSUER"), var("JWKS_URL"), &dev_issuer) {
            (Some(issuer), Some(jwks), None) => (issuer, jwks),
            (None, None, Some(dev)) => (dev.issuer(), dev.jwks_url()),
            (_, _, Some(_)) => {
                return Err(ConfigError::Invalid {
                    name: "OAUTH_ISSUER",
                    reason: "must not be set together with DEV_ISSUER_KEY".into(),
                });
            }
            _ => {
                return Err(ConfigError::Invalid {
                    name: "OAUTH_ISSUER",
                    reason: "OAUTH_ISSUER and JWKS_URL are required (make run sets up a development issuer)".into(),
                });
            }
        };
        let claims = claim_rules()?;
        let mcp_audience = var("MCP_AUDIENCE");
        check_audiences(&claims, mcp_audience.as_deref(), var("API_AUDIENCE").as_deref())?;
        let api_audience = var("API_AUDIENCE").unwrap_or_else(|| default_api_audience(&mcp_resource));
        let (jwks_max_age, jwks_max_stale) = jwks_ages()?;
        let signing_secret_arn = var("SIGNING_SECRET_ARN");
        let signing_secrets = match (list("SIGNING_SECRET"), mode) {
            (secrets, _) if !secrets.is_empty() => secrets,
            // Read from Secrets Manager during INIT (`App::build`).
            _ if signing_secret_arn.is_some() => Vec::new(),
            // Random, generated on first run and kept private on this machine:
            // a public default would let anyone forge cursors and confirmations.
            (_, Mode::Local) => {
                let path = var("SIGNING_SECRET_FILE").unwrap_or_else(|| DEFAULT_SIGNING_SECRET_FILE.into());
                let seed = crate::keyfile::load_or_create_seed(std::path::Path::new(&path))
                    .map_err(|e| ConfigError::Invalid { name: "SIGNING_SECRET_FILE", reason: e.to_string() })?;
                vec![crate::domain::hex(&seed)]
            }
            (_, Mode::Lambda) => {
                return Err(ConfigError::Invalid {
                    name: "SIGNING_SECRET",
                    reason: "SIGNING_SECRET_ARN (or SIGNING_SECRET) is required on Lambda".into(),
                });
            }
        };
        if mode == Mode::Lambda && signing_secrets.iter().any(|s| s.len() < 32 || s == LOCAL_SIGNING_SECRET) {
            return Err(ConfigError::Invalid {
                name: "SIGNING_SECRET",
                reason: "each secret must have at least 32 characters and not be the local default".into(),
            });
        }
        let webhook_allow_loopback = var("WEBHOOK_ALLOW_LOOPBACK").is_some_and(|v| v == "1" || v == "true");
        if webhook_allow_loopback && mode == Mode::Lambda {
            return Err(ConfigError::Invalid {
                name: "WEBHOOK_ALLOW_LOOPBACK",
                reason: "loopback webhook targets are refused on Lambda".into(),
            });
        }
        Ok(Config {
            mode,
            port,
            mcp_resource,
            allowed_origins: list("ALLOWED_ORIGINS"),
            allowed_hosts: list("ALLOWED_HOSTS"),
            log_format,
            // On Lambda by default (CloudWatch reads them); locally only when
            // asked (`METRICS=1`), so a console shows the readable lines alone.
            metrics: match var("METRICS") {
                Some(v) => !matches!(v.as_str(), "0" | "false" | "off"),
                None => mode == Mode::Lambda,
            },
            auth: AuthConfig {
                issuer,
                jwks_url,
                api_audience,
                mcp_audience,
                claims,
                jwks_min_refresh: Duration::from_secs(parse_or("JWKS_MIN_REFRESH_SECS", 60)?),
                jwks_max_age,
                jwks_max_stale,
            },
            store: store_from_env()?,
            request_timeout: millis("REQUEST_TIMEOUT_MS", DEFAULT_REQUEST_TIMEOUT)?,
            membership_cache: Duration::from_secs(parse_or("MEMBERSHIP_CACHE_SECS", 30)?),
            job_lease_secs: parse_or("JOB_LEASE_SECS", crate::worker::LEASE_SECS)?,
            rate_limit_per_minute: parse_or("RATE_LIMIT_PER_MINUTE", 120)?,
            ingest_rate_limit_per_minute: parse_or("INGEST_RATE_LIMIT_PER_MINUTE", 60_000)?,
            dev_issuer,
            signing_secrets,
            signing_secret_arn,
            secrets_endpoint: var("SECRETS_MANAGER_ENDPOINT"),
            webhook_allow_loopback,
            confirmation_ttl_secs: confirmation_ttl(parse_or("CONFIRMATION_TTL_SECS", 600)?)?,
            content_policy_cap: content_policy_cap(var("CONTENT_POLICY_CAP").as_deref())?,
        })
    }

    /// A local configuration with defaults, for tests and tools.
    pub fn local(port: u16) -> Config {
        Config {
            mode: Mode::Local,
            port,
            mcp_resource: format!("http://127.0.0.1:{port}/mcp"),
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            log_format: LogFormat::Pretty,
            metrics: false,
            auth: AuthConfig {
                issuer: "http://127.0.0.1:3001".into(),
                jwks_url: "http://127.0.0.1:3001/jwks.json".into(),
                api_audience: format!("http://127.0.0.1:{port}/api/v1"),
                mcp_audience: None,
                claims: crate::auth::claims::ClaimRules::default(),
                jwks_min_refresh: Duration::from_secs(60),
                jwks_max_age: crate::auth::jwks::DEFAULT_MAX_AGE,
                jwks_max_stale: crate::auth::jwks::DEFAULT_MAX_STALE,
            },
            store: StoreConfig {
                table: "kobana-inbox".into(),
                region: "us-east-1".into(),
                endpoint: Some("http://127.0.0.1:8000".into()),
                bucket: DEFAULT_BUCKET.into(),
                // The test suite runs many tests at once against one local
                // server: generous bounds, so a busy moment is not a fault.
                timeouts: StoreTimeouts {
                    connect: Duration::from_secs(2),
                    attempt: Duration::from_secs(15),
                    operation: Duration::from_secs(45),
                    attempts: 3,
                },
                cache_secs: crate::store::cache::CONFIG_CACHE_SECS,
                record_calls: true,
            },
            request_timeout: Duration::from_secs(60),
            membership_cache: Duration::from_secs(30),
            job_lease_secs: crate::worker::LEASE_SECS,
            rate_limit_per_minute: 0,
            ingest_rate_limit_per_minute: 0,
            dev_issuer: None,
            signing_secrets: vec![LOCAL_SIGNING_SECRET.to_owned()],
            signing_secret_arn: None,
            secrets_endpoint: None,
            webhook_allow_loopback: true,
            confirmation_ttl_secs: 600,
            content_policy_cap: crate::domain::provenance::ContentPolicy::Full,
        }
    }

    /// Where the signing secrets come from: Secrets Manager when an ARN is
    /// configured (at least 32 characters each on Lambda), else as configured.
    pub fn secret_source(&self) -> crate::secret_store::SecretSource {
        crate::secret_store::SecretSource {
            arn: self.signing_secret_arn.clone(),
            region: self.store.region.clone(),
            endpoint: self.secrets_endpoint.clone(),
            configured: self.signing_secrets.clone(),
            min_len: if self.mode == Mode::Lambda { 32 } else { 1 },
        }
    }

    /// The `Origin` values accepted: this server's own origin (that of
    /// `MCP_RESOURCE`, and locally `http://127.0.0.1:PORT` and
    /// `http://localhost:PORT`) without configuration, then `ALLOWED_ORIGINS`.
    /// A browser page served from the server itself is not a cross-site caller.
    pub fn origin_allowlist(&self) -> Vec<String> {
        let mut origins: Vec<String> = match self.mode {
            Mode::Local => crate::gate::loopback_origins(self.port),
            Mode::Lambda => Vec::new(),
        };
        if let (Some((scheme, _)), Some(authority)) =
            (self.mcp_resource.split_once("://"), authority_of(&self.mcp_resource))
        {
            origins.push(format!("{}://{authority}", scheme.to_ascii_lowercase()));
        }
        origins.extend(self.allowed_origins.iter().cloned());
        origins.sort();
        origins.dedup();
        origins
    }

    /// The `Host` values this server answers to (lowercase, with port where one is used).
    pub fn host_allowlist(&self) -> Vec<String> {
        let mut hosts: Vec<String> = match self.mode {
            Mode::Local => crate::gate::loopback_hosts(self.port),
            Mode::Lambda => Vec::new(),
        };
        if let Some(authority) = authority_of(&self.mcp_resource) {
            hosts.push(authority);
        }
        hosts.extend(self.allowed_hosts.iter().cloned());
        for h in &mut hosts {
            h.make_ascii_lowercase();
        }
        hosts.sort();
        hosts.dedup();
        hosts
    }
}

/// A duration in milliseconds from `name`, or `default`.
fn millis(name: &'static str, default: Duration) -> Result<Duration, ConfigError> {
    let default_ms = u64::try_from(default.as_millis()).unwrap_or(u64::MAX);
    match parse_or(name, default_ms)? {
        0 => Err(ConfigError::Invalid { name, reason: "must be at least 1 ms".into() }),
        ms => Ok(Duration::from_millis(ms)),
    }
}

fn parse_or<T: std::str::FromStr>(name: &'static str, default: T) -> Result<T, ConfigError> {
    match var(name) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| ConfigError::Invalid { name, reason: format!("{v:?} is not a valid number") }),
    }
}

/// `https://host/mcp` → `https://host/api/v1`.
fn default_api_audience(mcp_resource: &str) -> String {
    match mcp_resource.split_once("://") {
        Some((scheme, rest)) => {
            let authority = rest.split('/').next().unwrap_or(rest);
            format!("{scheme}://{authority}/api/v1")
        }
        None => format!("{mcp_resource}/api/v1"),
    }
}

/// `scheme://authority/path` → `authority` (lowercase).
fn authority_of(uri: &str) -> Option<String> {
    let rest = uri.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    (!authority.is_empty()).then(|| authority.to_ascii_lowercase())
}

fn validate_resource(uri: &str) -> Result<(), ConfigError> {
    let invalid = |reason: &str| ConfigError::Invalid { name: "MCP_RESOURCE", reason: format!("{uri:?} {reason}") };
    let scheme = uri.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("https" | "http")) {
        return Err(invalid("must be an http(s) URI"));
    }
    if uri.contains('#') || uri.ends_with('/') {
        return Err(invalid("must have no fragment and no trailing slash"));
    }
    if authority_of(uri).is_none() {
        return Err(invalid("has no host"));
    }
    Ok(())
}

/// The attachments bucket when `ATTACHMENTS_BUCKET` names none (the local
/// server's; the template always names its own).
pub const DEFAULT_BUCKET: &str = "kobana-inbox-attachments";

/// The table and how to reach it: `TABLE_NAME`, `AWS_REGION`,
/// `DYNAMODB_ENDPOINT` and the `DYNAMODB_*` timeouts (what `admin` needs,
/// without the rest of the configuration).
pub fn store_from_env() -> Result<StoreConfig, ConfigError> {
    Ok(StoreConfig {
        table: var("TABLE_NAME").unwrap_or_else(|| "kobana-inbox".into()),
        region: var("AWS_REGION").unwrap_or_else(|| "us-east-1".into()),
        endpoint: var("DYNAMODB_ENDPOINT"),
        bucket: var("ATTACHMENTS_BUCKET").unwrap_or_else(|| DEFAULT_BUCKET.into()),
        timeouts: StoreTimeouts {
            connect: millis("DYNAMODB_CONNECT_TIMEOUT_MS", StoreTimeouts::LAMBDA.connect)?,
            attempt: millis("DYNAMODB_ATTEMPT_TIMEOUT_MS", StoreTimeouts::LAMBDA.attempt)?,
            operation: millis("DYNAMODB_OPERATION_TIMEOUT_MS", StoreTimeouts::LAMBDA.operation)?,
            attempts: parse_or("DYNAMODB_MAX_ATTEMPTS", StoreTimeouts::LAMBDA.attempts)?,
        },
        cache_secs: parse_or("CONFIG_CACHE_SECS", crate::store::cache::CONFIG_CACHE_SECS)?,
        record_calls: false,
    })
}

/// `JWKS_MAX_AGE_MINUTES` (default 10, at least 1) and
/// `JWKS_MAX_STALE_MINUTES` (default 60, at least the maximum age).
fn jwks_ages() -> Result<(Duration, Duration), ConfigError> {
    let minutes = |d: Duration| d.as_secs() / 60;
    let max_age = parse_or("JWKS_MAX_AGE_MINUTES", minutes(crate::auth::jwks::DEFAULT_MAX_AGE))?;
    let max_stale = parse_or("JWKS_MAX_STALE_MINUTES", minutes(crate::auth::jwks::DEFAULT_MAX_STALE))?;
    if max_age == 0 {
        return Err(ConfigError::Invalid { name: "JWKS_MAX_AGE_MINUTES", reason: "must be at least 1".into() });
    }
    if max_stale < max_age {
        return Err(ConfigError::Invalid {
            name: "JWKS_MAX_STALE_MINUTES",
            reason: format!("must be at least JWKS_MAX_AGE_MINUTES ({max_age})"),
        });
    }
    let duration = |m: u64| Duration::from_secs(m.saturating_mul(60));
    Ok((duration(max_age), duration(max_stale)))
}

/// With an audience claim other than `aud` (Cognito's `client_id`) the
/// audience names an app client, not a URL: each surface needs its own
/// (`MCP_AUDIENCE` and `API_AUDIENCE`, both set and different), or a token
/// for the REST API would open the MCP endpoint and the other way round.
fn check_audiences(
    claims: &crate::auth::claims::ClaimRules,
    mcp_audience: Option<&str>,
    api_audience: Option<&str>,
) -> Result<(), ConfigError> {
    if claims.audience_claim == "aud" {
        return Ok(());
    }
    let claim = &claims.audience_claim;
    match (mcp_audience, api_audience) {
        (None, _) => Err(ConfigError::Invalid {
            name: "MCP_AUDIENCE",
            reason: format!("is required with AUDIENCE_CLAIM={claim} (the MCP endpoint's app client)"),
        }),
        (_, None) => Err(ConfigError::Invalid {
            name: "API_AUDIENCE",
            reason: format!("is required with AUDIENCE_CLAIM={claim} (the REST API's app client)"),
        }),
        (Some(mcp), Some(api)) if same_audience(mcp, api) => Err(ConfigError::Invalid {
            name: "MCP_AUDIENCE",
            reason: format!(
                "must differ from API_AUDIENCE with AUDIENCE_CLAIM={claim}: one app client for the MCP endpoint, another for the REST API"
            ),
        }),
        _ => Ok(()),
    }
}

/// Whether two configured audiences would accept the same tokens (compared
/// as tokens are, and case-insensitively besides: stricter is harmless here).
fn same_audience(one: &str, other: &str) -> bool {
    use crate::auth::token::normalise;
    normalise(&one.to_ascii_lowercase()) == normalise(&other.to_ascii_lowercase())
}

/// `AUDIENCE_CLAIM`, `ORG_CLAIM`, `ORG_ID`, `SCOPE_PREFIX` and `SCOPE_SEPARATOR` (see `auth::claims`).
fn claim_rules() -> Result<crate::auth::claims::ClaimRules, ConfigError> {
    let mut rules = crate::auth::claims::ClaimRules::default();
    if let Some(claim) = var("AUDIENCE_CLAIM") {
        rules.audience_claim = claim;
    }
    if let Some(claim) = var("ORG_CLAIM") {
        rules.org_claim = claim;
    }
    if let Some(org) = var("ORG_ID") {
        rules.fixed_org = Some(OrgId::parse(&org).ok_or_else(|| ConfigError::Invalid {
            name: "ORG_ID",
            reason: "must be 1 to 64 letters, digits, _ or -".into(),
        })?);
    }
    rules.scope_prefix = var("SCOPE_PREFIX").unwrap_or_default();
    if let Some(separator) = var("SCOPE_SEPARATOR") {
        let mut chars = separator.chars();
        rules.scope_separator = match (chars.next(), chars.next()) {
            (Some(c), None) if !c.is_alphanumeric() && c != ' ' => c,
            _ => {
                return Err(ConfigError::Invalid {
                    name: "SCOPE_SEPARATOR",
                    reason: "must be one character that is not a letter, a digit or a space".into(),
                });
            }
        };
    }
    Ok(rules)
}

/// At most this long a destructive tool's confirmation stays valid.
pub const MAX_CONFIRMATION_TTL_SECS: u64 = 3600;
// A confirmation's single-use marker must outlive it through a shard raise.
const _: () = assert!(MAX_CONFIRMATION_TTL_SECS < crate::domain::Shards::KEYED_GRACE_SECS);

/// `CONTENT_POLICY_CAP`: one of the policies' names; unset or empty is `full`
/// (no cap). A misspelt cap refuses to start rather than cap nothing.
fn content_policy_cap(value: Option<&str>) -> Result<crate::domain::provenance::ContentPolicy, ConfigError> {
    use crate::domain::provenance::ContentPolicy;
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(ContentPolicy::Full),
        Some(name) => ContentPolicy::parse(name).ok_or_else(|| ConfigError::Invalid {
            name: "CONTENT_POLICY_CAP",
            reason: format!("{name:?} is not one of {}", ContentPolicy::NAMES.join(", ")),
        }),
    }
}

/// `CONFIRMATION_TTL_SECS`: 1 s to an hour. A confirmation is answered by a
/// person at once; and its single-use marker is looked up under the current
/// and the previous shard count only for `Shards::KEYED_GRACE_SECS` after a
/// raise, so a confirmation that lived longer could outlive its marker and
/// be used twice.
fn confirmation_ttl(secs: u64) -> Result<u64, ConfigError> {
    if (1..=MAX_CONFIRMATION_TTL_SECS).contains(&secs) {
        Ok(secs)
    } else {
        Err(ConfigError::Invalid {
            name: "CONFIRMATION_TTL_SECS",
            reason: format!("{secs} is not 1 to {MAX_CONFIRMATION_TTL_SECS} seconds"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_hosts_are_loopback_names_with_the_port() {
        let hosts = Config::local(3000).host_allowlist();
        assert_eq!(hosts, vec!["127.0.0.1:3000", "[::1]:3000", "localhost:3000"]);
    }

    #[test]
    fn another_audience_claim_needs_one_audience_per_surface() {
        let cognito = crate::auth::claims::ClaimRules { audience_claim: "client_id".into(), ..Default::default() };
        assert!(check_audiences(&cognito, Some("mcpclient"), Some("restclient")).is_ok());
        for (mcp, api) in [(Some("c1"), Some("c1")), (Some("c1"), Some("C1")), (None, Some("c1")), (Some("c1"), None)] {
            assert!(check_audiences(&cognito, mcp, api).is_err(), "{mcp:?} {api:?}");
        }
        assert!(check_audiences(&Default::default(), None, None).is_ok(), "aud: the URLs by default");
    }

    #[test]
    fn a_confirmation_lives_one_second_to_an_hour() {
        assert_eq!(confirmation_ttl(600).ok(), Some(600));
        assert_eq!(confirmation_ttl(MAX_CONFIRMATION_TTL_SECS).ok(), Some(3600));
        for secs in [0, MAX_CONFIRMATION_TTL_SECS + 1, 90_000] {
            assert!(confirmation_ttl(secs).is_err(), "{secs}");
        }
    }

    #[test]
    fn resource_uri_rules() {
        assert!(validate_resource("https://inbox.example.com/mcp").is_ok());
        assert!(validate_resource("https://inbox.example.com/mcp/").is_err());
        assert!(validate_resource("ftp://x/mcp").is_err());
        assert!(validate_resource("https:///mcp").is_err());
    }
}
