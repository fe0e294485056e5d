//! Data-subject requests (LGPD arts. 18–19), for the organization's
//! administrators: `POST /org/data_requests` with a CPF or CNPJ (any
//! formatting; the alphanumeric CNPJ included; check digits verified) asks
//! the worker for every e-mail of the organization that names it — in its
//! sender, subject, body, attachments' text or decoded Pix keys — exported
//! as one JSON document (`export`) or erased (`erase`, as
//! `POST /emails/{id}/erase` does, in every workspace). 202 with the
//! request; `GET /org/data_requests/{id}` follows it and, once an export
//! succeeded, gives the document's link (5 minutes; the document itself is
//! kept 7 days).
//!
//! The e-mails are found through the identifier index written when each
//! was processed (`store::privacy`), never by reading every e-mail. The
//! identifier is not stored: the request keeps its keyed digests and a
//! masked form (`cpf ***.***.***-09`). Not MCP tools: an agent does not
//! answer data subjects. The request's record goes on the organization's
//! trail (`GET /org/audit`).

use http::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::ApiError;
use super::operation::{Operation, Verb, operation};
use super::schemas::{Record, Shape};
use super::shape::{body, value_rule};
use super::{ApiResponse, Ctx, Input, Needs, Op};
use inbox_domain::Scope;
use inbox_domain::clock::format;
use inbox_domain::ids::{Kind, is_id};
use inbox_domain::personal::Identifier;
use inbox_domain::records::{DataRequest, DataRequestKind, JobStatus};
use inbox_store::StoredDataRequest;
use inbox_store::privacy::{export_key, identifier_digests};
use inbox_support::sys::{new_id, now_string};

/// The operations of this module.
pub static OPERATIONS: &[Op] = &[&CREATE, &GET];

const ORG: Needs = Needs::Org(Scope::OrgAdmin);

pub static CREATE: Operation = Operation {
    summary: "Answer a data subject: export or erase every e-mail that names a CPF or CNPJ (202 with the request)",
    body: Some(body!(RequestBody)),
    answers: &[(StatusCode::ACCEPTED, Shape::Data(Record::DataRequest))],
    enqueues: true,
    ..operation("data_request_create", Verb::Post, "/org/data_requests", ORG, |ctx, input| Box::pin(create(ctx, input)))
};

pub static GET: Operation = Operation {
    summary: "Follow a data subject's request; a finished export gives its document's link",
    id_of: "data request",
    answers: &[(StatusCode::OK, Shape::Data(Record::DataRequest))],
    ..operation("data_request_get", Verb::Get, "/org/data_requests/{id}", ORG, |ctx, input| {
        Box::pin(get(ctx, input.id()))
    })
};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RequestBody {
    /// export (a JSON document of every e-mail naming the identifier) or erase (every one erased)
    kind: DataRequestKind,
    identifier: IdentifierIn,
}

/// A CPF or CNPJ as a person types it.
struct IdentifierIn(Identifier);

impl<'de> Deserialize<'de> for IdentifierIn {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        if raw.chars().count() > 40 {
            return Err(value_rule("must be a CPF or a CNPJ (at most 40 characters)"));
        }
        Identifier::parse(&raw).map(IdentifierIn).map_err(value_rule)
    }
}

impl JsonSchema for IdentifierIn {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Identifier".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string", "minLength": 11, "maxLength": 40,
            "description": "A CPF (11 digits) or CNPJ (14 characters, the alphanumeric CNPJ included), with or without punctuation; check digits verified",
        })
    }
}

async fn create(ctx: &Ctx<'_>, input: &Input<'_>) -> Result<ApiResponse, ApiError> {
    let body: RequestBody = input.body()?;
    let org = &ctx.tenant.org;
    let now = now_string();
    let request = DataRequest {
        id: new_id(Kind::DataRequest),
        kind: body.kind,
        identifier: body.identifier.0.masked(),
        status: JobStatus::Queued,
        emails: 0,
        error: None,
        requested_by: ctx.principal.sub.clone(),
        created_at: now.clone(),
        updated_at: now,
    };
    let stored = StoredDataRequest {
        digests: identifier_digests(ctx.secrets, org, &body.identifier.0),
        org_id: org.to_string(),
        request,
        lease_until: None,
    };
    let audit = ctx.audit(&stored.request.id, StatusCode::ACCEPTED)?;
    ctx.store.create_data_request(&stored, org, &audit).await?;
    ApiResponse::data(StatusCode::ACCEPTED, &stored.request)
}

async fn get(ctx: &Ctx<'_>, id: &str) -> Result<ApiResponse, ApiError> {
    let org = &ctx.tenant.org;
    let found = if is_id(Kind::DataRequest, id) { ctx.store.get_data_request(org, id).await? } else { None };
    let Some(stored) = found else { return Err(ApiError::NotFound { what: "Data request" }) };
    let mut data = serde_json::to_value(&stored.request).map_err(ApiError::unserializable)?;
    let exported = stored.request.kind == DataRequestKind::Export && stored.request.status == JobStatus::Succeeded;
    let key = export_key(org, id);
    // The document is kept 7 days (the bucket's lifecycle): past that, no link.
    if exported && ctx.store.objects().keys_under(&key).await?.contains(&key) {
        let name = format!("{id}.json");
        let url = ctx.store.objects().download_link(&key, &name, "application/json").await?;
        let expires =
            inbox_support::sys::now() + time::Duration::seconds(inbox_store::objects::LINK_SECS.cast_signed());
        if let Value::Object(fields) = &mut data {
            fields.insert("document".into(), json!({"url": url, "expires_at": format(expires)}));
        }
    }
    Ok(ApiResponse::ok(StatusCode::OK, json!({ "data": data })))
}
