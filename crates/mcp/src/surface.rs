//! What an MCP server offers, as a value the pipeline is given: its
//! `Identity` and its `Catalogue` (tools, resources, prompts, completions).
//! `super::McpServer` runs every stage of a request itself — era selection,
//! envelope and routing headers, authentication (at the edge), narrowing,
//! the workspace, method resolution, the tasks extension and decoration —
//! and asks the catalogue only for a method's own answer, in the request's
//! era. The product's catalogue is `super::product::Product` (the API's
//! operations as tools); the conformance fixture server (`inbox_conformance`,
//! `dev` builds only) is given another, through the very same pipeline.
//!
//! A catalogue answers with an `Outcome`: a complete result, an
//! `input_required` result (`super::input`, on `tools/call`, `prompts/get`
//! and `resources/read` only, asking for form elicitations or for requests
//! of kinds the catalogue defines: `input::Kind`), or a task (`super::tasks`,
//! on `tools/call`: the product's long tools enqueue its own jobs; another
//! catalogue's run as extension jobs, whose kind its binary registers with
//! the worker, `inbox_worker::Extensions`, and `tasks::start` creates).

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::jsonrpc::RpcError;
use super::{Call, Outcome};
use inbox_domain::Tenant;

/// A method's answer, computed later (the catalogue's async methods).
pub type Answer<'a, T> = BoxFuture<'a, Result<T, RpcError>>;

/// Who the server says it is, in `serverInfo` and `instructions`.
#[derive(Debug, Clone, Copy)]
pub struct Identity {
    pub name: &'static str,
    /// Shown from 2025-06-18 on (2025-03-26 has no titles).
    pub title: &'static str,
    pub version: &'static str,
    /// What the agent is told about the server, in both eras.
    pub instructions: &'static str,
}

/// What the pipeline needs to know of a tool before the catalogue runs it.
#[derive(Debug, Clone, Copy)]
pub struct ToolFacts {
    /// Its name as a label the logs and metrics may carry (a client never
    /// writes its own labels).
    pub label: &'static str,
    /// Whether calling it may change state (such calls are counted against
    /// the rate budget before they run).
    pub changes_state: bool,
    /// The arguments its schema mirrors into custom headers
    /// (`x-mcp-header`), each with its header's name: the pipeline checks
    /// `Mcp-Param-{name}` against them (stateless era).
    pub param_headers: &'static [(&'static str, &'static str)],
}

/// The tools, resources, prompts and completions of a server: one method
/// per MCP method the catalogue answers, and `tool` for what the pipeline
/// checks before it calls one. Every method gets the request (`Call`: its
/// era, the client's capabilities, the caller as the connection narrowed
/// it, the params) and the workspace resolved for it; lists are answered
/// whole (the pipeline refuses any cursor). A trait object, so that the
/// composition root picks the catalogue at start; the answers that run
/// operations are boxed futures (`Answer`), which also keeps the
/// dispatcher's own future small (`methods::dispatch`).
pub trait Catalogue: Send + Sync {
    fn identity(&self) -> &Identity;

    /// Tool `name`, if there is one.
    fn tool(&self, name: &str) -> Option<ToolFacts>;

    /// `tools/list`: the result object (its `tools`).
    fn list_tools(&self, call: &Call<'_>, tenant: &Tenant) -> Outcome;

    /// `tools/call`.
    fn call_tool<'a>(&'a self, call: &'a Call<'_>, tenant: &'a Tenant) -> Answer<'a, Outcome>;

    /// `resources/list`: the resources this caller may read.
    fn list_resources(&self, call: &Call<'_>, tenant: &Tenant) -> Vec<Value>;

    /// `resources/templates/list`.
    fn list_resource_templates(&self, call: &Call<'_>, tenant: &Tenant) -> Vec<Value>;

    /// `resources/read`; a URI that names nothing is the era's "not found"
    /// (`Era::resource_not_found`).
    fn read_resource<'a>(&'a self, call: &'a Call<'_>, tenant: &'a Tenant) -> Answer<'a, Outcome>;

    /// `prompts/list`.
    fn list_prompts(&self, call: &Call<'_>, tenant: &Tenant) -> Vec<Value>;

    /// `prompts/get`.
    fn get_prompt<'a>(&'a self, call: &'a Call<'_>, tenant: &'a Tenant) -> Answer<'a, Outcome>;

    /// `completion/complete`: the result object (its `completion`).
    fn complete<'a>(&'a self, call: &'a Call<'_>, tenant: &'a Tenant) -> Answer<'a, Value>;

    /// Whether it draws views for clients of the MCP Apps extension
    /// (`super::apps`): `server/discover` then advertises the extension to
    /// the clients that declare it.
    fn has_views(&self) -> bool {
        false
    }
}
