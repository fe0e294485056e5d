//! `App`: everything built once per container (configuration, the MCP
//! server's static documents, allowlists) and borrowed by every request.

use crate::config::Config;
use crate::mcp::McpServer;

pub struct App {
    pub config: Config,
    pub mcp: McpServer,
    /// Lowercase `Host` values this server answers to.
    pub(crate) hosts: Vec<String>,
}

impl App {
    pub fn new(config: Config) -> Self {
        let hosts = config.host_allowlist();
        Self { mcp: McpServer::new(), hosts, config }
    }
}
