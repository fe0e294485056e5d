//! `ApiError`: one enum for every way an operation can fail, one status
//! table, one renderer. Internal causes are logged, never shown.

use http::StatusCode;
use serde_json::{Map, Value, json};

use inbox_domain::Scope;
use inbox_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Malformed input: JSON syntax, wrong types, unknown fields, bad query parameters.
    #[error("{message}")]
    BadRequest { code: &'static str, message: String, details: Value },
    /// Well-formed input whose values are not acceptable (bad address, URL, date, length).
    #[error("{message}")]
    Unprocessable { field: String, message: String },
    #[error("{what} not found")]
    NotFound { what: &'static str },
    #[error("no such route")]
    NoRoute,
    #[error("method not allowed")]
    /// `allow`: the methods the path has, in the declarations' order.
    MethodNotAllowed { allow: String },
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    #[error("missing scope")]
    InsufficientScope { scopes: Vec<Scope> },
    #[error("{message}")]
    Forbidden { message: String },
    #[error("request body too large")]
    TooLarge,
    #[error("X-Workspace-Id is required")]
    WorkspaceRequired { workspaces: Vec<String> },
    #[error("workspace not found")]
    WorkspaceNotFound { workspaces: Vec<String> },
    /// The person belongs to no workspace of their organization.
    #[error("no membership")]
    NoMembership { org: String },
    /// The organization has no workspace yet.
    #[error("no workspace")]
    NoWorkspace { org: String },
    /// The workspace is archived: a change (409), or a read by someone who
    /// is not its admin (403).
    #[error("workspace archived")]
    WorkspaceArchived { workspace: String, change: bool },
    #[error("service unavailable")]
    Unavailable,
}

impl ApiError {
    /// A record that cannot be rendered as JSON (a defect, never a client's
    /// doing): logged with its cause, answered as the server's 503.
    pub fn unserializable(error: serde_json::Error) -> ApiError {
        tracing::error!(%error, "a record could not be rendered as JSON");
        ApiError::Unavailable
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>, details: Value) -> ApiError {
        ApiError::BadRequest { code, message: message.into(), details }
    }

    /// A `cursor` that is not one this list handed out for this query.
    pub fn invalid_cursor() -> ApiError {
        ApiError::bad_request(
            "invalid_cursor",
            "The cursor is not valid for this list: use the next_cursor of the previous page, unchanged, with the same filters",
            json!({"parameter": "cursor"}),
        )
    }

    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> ApiError {
        ApiError::Unprocessable { field: field.into(), message: message.into() }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest { .. } | ApiError::WorkspaceRequired { .. } | ApiError::WorkspaceNotFound { .. } => {
                StatusCode::BAD_REQUEST
            }
            ApiError::Unprocessable { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::NotFound { .. } | ApiError::NoRoute => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict { .. } => StatusCode::CONFLICT,
            ApiError::InsufficientScope { .. }
            | ApiError::Forbidden { .. }
            | ApiError::NoMembership { .. }
            | ApiError::NoWorkspace { .. } => StatusCode::FORBIDDEN,
            ApiError::WorkspaceArchived { change: true, .. } => StatusCode::CONFLICT,
            ApiError::WorkspaceArchived { change: false, .. } => StatusCode::FORBIDDEN,
            ApiError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// `{"error": {"code", "message", "details"}}`.
    pub fn body(&self) -> Value {
        let (code, message, details): (&str, String, Value) = match self {
            ApiError::BadRequest { code, message, details } => (code, message.clone(), details.clone()),
            ApiError::Unprocessable { field, message } => {
                ("validation_failed", format!("{field}: {message}"), json!({"field": field}))
            }
            ApiError::NotFound { what } => ("not_found", format!("{what} not found"), json!({})),
            ApiError::NoRoute => ("not_found", "No such route".into(), json!({})),
            ApiError::MethodNotAllowed { allow } => {
                ("method_not_allowed", format!("This route accepts {allow}"), json!({"allow": allow}))
            }
            ApiError::Conflict { code, message } => (code, message.clone(), json!({})),
            ApiError::InsufficientScope { scopes } => {
                let names: Vec<&str> = scopes.iter().map(|s| s.as_str()).collect();
                ("insufficient_scope", format!("{} is required", names.join(" ")), json!({"required_scopes": names}))
            }
            ApiError::Forbidden { message } => ("forbidden", message.clone(), json!({})),
            ApiError::TooLarge => (
                "payload_too_large",
                "The request body is larger than its limit (1 MiB; 4 MiB for a raw message)".into(),
                json!({}),
            ),
            ApiError::WorkspaceRequired { workspaces } => (
                "workspace_required",
                "X-Workspace-Id is required: this organization has more than one workspace".into(),
                json!({"missing": "X-Workspace-Id", "workspaces": workspaces}),
            ),
            ApiError::WorkspaceNotFound { workspaces } => (
                "workspace_not_found",
                "No workspace with this X-Workspace-Id for you in this organization".into(),
                json!({"header": "X-Workspace-Id", "workspaces": workspaces}),
            ),
            ApiError::NoMembership { org } => (
                "no_membership",
                format!("You have no workspace in organization {org}; ask an administrator to add you"),
                json!({"organization": org}),
            ),
            ApiError::NoWorkspace { org } => (
                "no_workspace",
                format!(
                    "Organization {org} has no workspace yet; an organization administrator creates one (POST /api/v1/org/workspaces)"
                ),
                json!({"organization": org}),
            ),
            ApiError::WorkspaceArchived { workspace, change: true } => (
                "workspace_archived",
                format!("Workspace {workspace} is archived: nothing in it can change"),
                json!({"workspace": workspace}),
            ),
            ApiError::WorkspaceArchived { workspace, change: false } => (
                "workspace_archived",
                format!("Workspace {workspace} is archived: only its admins can read it"),
                json!({"workspace": workspace}),
            ),
            ApiError::Unavailable => {
                ("unavailable", "The service is temporarily unavailable; try again shortly".into(), json!({}))
            }
        };
        let mut error = Map::new();
        error.insert("code".into(), Value::from(code));
        error.insert("message".into(), Value::from(message));
        error.insert("details".into(), details);
        json!({"error": error})
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound => ApiError::NotFound { what: "Record" },
            StoreError::InvalidPosition => ApiError::invalid_cursor(),
            StoreError::Conflict => ApiError::Conflict {
                code: "conflict",
                message: "The record was changed by another request; read it again and retry".into(),
            },
            other => {
                tracing::error!(error = %other, "storage failure");
                ApiError::Unavailable
            }
        }
    }
}
