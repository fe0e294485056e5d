//! The conformance fixture catalogue (`dev` builds only; never in the Lambda
//! artefacts): the tools, resources, prompts and completions the official
//! MCP conformance runner (`@modelcontextprotocol/conformance`) drives by
//! name — `test_simple_text`, `test://static-text`, `test_simple_prompt`,
//! the `test_input_required_result_*` tools, the tasks fixtures
//! (`slow_compute`, `failing_job`, `confirm_delete`, …) — served by this
//! crate's own MCP pipeline instead of the product's tools. The binary
//! `crates/conformance/src/main.rs` runs it (docs/conformance.md).
//!
//! Nothing here is the product's, and nothing of the pipeline is replaced:
//! era selection, the envelope and routing headers, authentication,
//! narrowing, the workspace, `input_required` (`inbox_mcp::input`), tasks
//! over the job queue (`inbox_mcp::tasks`, run by `inbox_worker` with
//! `jobs::FixtureJobs`) and decoration are the same code the product runs.
//! What only the fixtures use lives here and reaches the pipeline through
//! its generic seams: the sampling and roots requests (`requests`, as
//! `inbox_mcp::input::Kind`s) and the tool jobs (`jobs`, an extension job
//! kind registered with the worker; `serving` gives the composition root
//! both the catalogue and that kind).
//! Fixture answers follow the runner's scenario descriptions; where the
//! product's transport cannot do what a fixture asks (a progress or log
//! notification, a request sent to the client in the 2025 eras), the
//! fixture answers what it can and says why.
//!
//! - `tools`: the tool table and what each tool does per era;
//! - `jobs`: the long tools, as tool jobs the worker runs;
//! - `requests`: what the fixtures ask the client for besides a form;
//! - `documents`: resources, prompts and completions.

pub mod documents;
pub mod jobs;
pub mod requests;
pub mod tools;

use std::sync::Arc;

use serde_json::{Value, json};

use inbox::app::Serving;
use inbox_domain::Tenant;
use inbox_mcp::surface::{Answer, Catalogue, Identity, ToolFacts};
use inbox_mcp::{Call, Outcome};

/// The extension kind of the fixtures' tool jobs (`JobExtension::kind`): what
/// `tools` starts and `jobs` runs.
pub const KIND: &str = "tool.call";

pub const IDENTITY: Identity = Identity {
    name: "kobana-inbox-conformance-fixtures",
    title: "Kobana Autonomous Inbox (conformance fixtures)",
    version: env!("CARGO_PKG_VERSION"),
    instructions: "The conformance fixture server of the Kobana Autonomous Inbox: the product's MCP pipeline with \
the official conformance runner's fixture tools, resources and prompts instead of the product's. Nothing here \
touches e-mails or webhooks.",
};

/// A 1×1 PNG.
pub const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// Sixteen samples of 8 kHz, 8-bit mono WAV.
pub const WAV_BASE64: &str = "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YRAAAACAoMCggGBAYICgwKCAYEBg";

/// A text content block.
pub fn text(text: impl Into<String>) -> Value {
    json!({"type": "text", "text": text.into()})
}

/// An image content block (the PNG).
pub fn image() -> Value {
    json!({"type": "image", "data": PNG_BASE64, "mimeType": "image/png"})
}

/// An embedded text resource content block.
pub fn embedded(uri: &str, mime_type: &str, text: &str) -> Value {
    json!({"type": "resource", "resource": {"uri": uri, "mimeType": mime_type, "text": text}})
}

/// A `CallToolResult` with `content`.
pub fn call_result(content: Vec<Value>, is_error: bool) -> Value {
    json!({"content": content, "isError": is_error})
}

/// What the composition root is given to serve the fixtures
/// (`inbox::app::App::build_with`): their catalogue, and the extension job
/// kind their long tools start, with what runs it.
pub fn serving() -> Serving {
    Serving { catalogue: Some(Arc::new(Fixtures::new())), extensions: jobs::extensions() }
}

/// The fixture catalogue: every tool, resource and prompt rendered once per
/// protocol version.
pub struct Fixtures {
    tools: tools::Tools,
    documents: documents::Documents,
}

impl Default for Fixtures {
    fn default() -> Self {
        Self::new()
    }
}

impl Fixtures {
    pub fn new() -> Self {
        Fixtures { tools: tools::Tools::new(), documents: documents::Documents::new() }
    }
}

impl Catalogue for Fixtures {
    fn identity(&self) -> &Identity {
        &IDENTITY
    }

    fn tool(&self, name: &str) -> Option<ToolFacts> {
        tools::find(name).map(|tool| ToolFacts {
            label: tool.name,
            changes_state: !tool.read_only,
            param_headers: tool.headers,
        })
    }

    fn list_tools(&self, call: &Call<'_>, _tenant: &Tenant) -> Outcome {
        Outcome::Complete(json!({"tools": self.tools.list(call)}))
    }

    fn call_tool<'a>(&'a self, call: &'a Call<'_>, tenant: &'a Tenant) -> Answer<'a, Outcome> {
        Box::pin(tools::call(call, tenant))
    }

    fn list_resources(&self, call: &Call<'_>, _tenant: &Tenant) -> Vec<Value> {
        self.documents.resources(call.era.version())
    }

    fn list_resource_templates(&self, call: &Call<'_>, _tenant: &Tenant) -> Vec<Value> {
        self.documents.templates(call.era.version())
    }

    fn read_resource<'a>(&'a self, call: &'a Call<'_>, tenant: &'a Tenant) -> Answer<'a, Outcome> {
        Box::pin(async move { documents::read(call, tenant) })
    }

    fn list_prompts(&self, call: &Call<'_>, _tenant: &Tenant) -> Vec<Value> {
        self.documents.prompts(call.era.version())
    }

    fn get_prompt<'a>(&'a self, call: &'a Call<'_>, tenant: &'a Tenant) -> Answer<'a, Outcome> {
        Box::pin(async move { documents::get_prompt(call, tenant) })
    }

    fn complete<'a>(&'a self, call: &'a Call<'_>, _tenant: &'a Tenant) -> Answer<'a, Value> {
        Box::pin(async move { documents::complete(call) })
    }
}
