//! Typed configuration, read from environment variables once per container.
//! A bad variable fails start-up with a message naming it; nothing on the
//! request path reads the environment.

use std::env;

use thiserror::Error;

/// Where the process runs: decides log format, Host allowlist and which
/// development conveniences may be switched on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Inside AWS Lambda (`AWS_LAMBDA_RUNTIME_API` is set).
    Lambda,
    /// A plain HTTP port on loopback (`make run`, tests).
    Local,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Json,
    Pretty,
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
        Ok(Config {
            mode,
            port,
            mcp_resource,
            allowed_origins: list("ALLOWED_ORIGINS"),
            allowed_hosts: list("ALLOWED_HOSTS"),
            log_format,
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
        }
    }

    /// The `Host` values this server answers to (lowercase, with port where one is used).
    pub fn host_allowlist(&self) -> Vec<String> {
        let mut hosts: Vec<String> = match self.mode {
            Mode::Local => ["127.0.0.1", "localhost", "[::1]"].iter().map(|h| format!("{h}:{}", self.port)).collect(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_hosts_are_loopback_names_with_the_port() {
        let hosts = Config::local(3000).host_allowlist();
        assert_eq!(hosts, vec!["127.0.0.1:3000", "[::1]:3000", "localhost:3000"]);
    }

    #[test]
    fn resource_uri_rules() {
        assert!(validate_resource("https://inbox.example.com/mcp").is_ok());
        assert!(validate_resource("https://inbox.example.com/mcp/").is_err());
        assert!(validate_resource("ftp://x/mcp").is_err());
        assert!(validate_resource("https:///mcp").is_err());
    }
}
