//! The worker Lambda's view of the table's stream: each new job item names
//! its tenant and id; the runner does the rest. Records that cannot be
//! recorded are reported as batch item failures, so Lambda delivers them
//! again (and the job's lease makes that safe).
//!
//! The stream also guards the audit trail. Audit records are only ever
//! added (every write of one is a conditional put), but the MCP function's
//! role may write anywhere in the table: IAM cannot tell an audit item from
//! the others by its sort key, nor allow a put only when it adds. So a change
//! or removal of an audit record that is not its TTL expiry (done by the
//! DynamoDB service itself) is reported here: an error log line and the
//! `AuditTampered` metric, which the template alarms on. The record's
//! earlier state stays restorable from point-in-time recovery.

use aws_lambda_events::event::dynamodb::Event;
use aws_lambda_events::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use serde::Deserialize;

use super::{Ran, Runner, run};
use crate::domain::{OrgId, Role, Tenant, WorkspaceId};
use crate::store::{is_audit_key, is_job_key};

#[derive(Deserialize)]
struct JobImage {
    id: String,
    org_id: String,
    workspace_id: String,
}

/// Runs the jobs of a stream batch, one after the other (a batch comes from
/// one shard, in order).
pub async fn handle(runner: &Runner, event: Event) -> DynamoDbEventResponse {
    let mut response = DynamoDbEventResponse::default();
    for record in event.records {
        if record.event_name != "INSERT" {
            audit_guard(&record);
            continue;
        }
        // Other new items never pass the subscription's filter on AWS.
        let is_job = serde_dynamo::from_item::<_, Keys>(record.change.keys.clone()).is_ok_and(|k| is_job_key(&k.sk));
        if !is_job {
            continue;
        }
        let image = match serde_dynamo::from_item::<_, JobImage>(record.change.new_image) {
            Ok(image) => image,
            // A job item that does not decode is a defect worth seeing, not a silent drop.
            Err(error) => {
                tracing::error!(event = %record.event_id, %error, "a job's stream record could not be read; dropped");
                continue;
            }
        };
        let (Some(org), Some(workspace)) = (OrgId::parse(&image.org_id), WorkspaceId::parse(&image.workspace_id))
        else {
            tracing::error!(job = %image.id, "job item names no valid tenant; dropped");
            continue;
        };
        let tenant = Tenant { org, workspace, role: Role::Viewer };
        match run(runner, &tenant, &image.id).await {
            Ok(Ran::Finished(status)) => tracing::info!(job = %image.id, ?status, "stream job done"),
            Ok(Ran::Skipped) => tracing::info!(job = %image.id, "stream job already done"),
            // Asking for redelivery: once the lease lapses, the job runs.
            // Dropping the record would lose a job whose leaseholder died.
            Ok(Ran::Busy) => {
                tracing::info!(job = %image.id, "stream job leased elsewhere; asking for redelivery");
                let mut failure = DynamoDbBatchItemFailure::default();
                failure.item_identifier = record.change.sequence_number.clone();
                response.batch_item_failures.push(failure);
            }
            Err(error) => {
                tracing::error!(job = %image.id, %error, "stream job not recorded; asking for redelivery");
                let mut failure = DynamoDbBatchItemFailure::default();
                failure.item_identifier = record.change.sequence_number.clone();
                response.batch_item_failures.push(failure);
            }
        }
    }
    response
}

#[derive(Deserialize)]
struct Keys {
    pk: String,
    sk: String,
}

/// Reports a change or removal of an audit record other than its expiry.
fn audit_guard(record: &aws_lambda_events::event::dynamodb::EventRecord) {
    let Ok(keys) = serde_dynamo::from_item::<_, Keys>(record.change.keys.clone()) else { return };
    if !is_audit_key(&keys.sk) {
        return;
    }
    let expired = record.event_name == "REMOVE"
        && record
            .user_identity
            .as_ref()
            .is_some_and(|u| u.type_ == "Service" && u.principal_id == "dynamodb.amazonaws.com");
    if expired {
        return;
    }
    tracing::error!(pk = %keys.pk, sk = %keys.sk, event = %record.event_name, "an audit record was changed or removed");
    crate::telemetry::Emf {
        dimensions: &[&[]],
        metrics: &[("AuditTampered", "Count", 1.0)],
        properties: &[
            ("Partition", serde_json::Value::from(keys.pk.as_str())),
            ("Record", serde_json::Value::from(keys.sk.as_str())),
            ("Event", serde_json::Value::from(record.event_name.as_str())),
        ],
    }
    .emit();
}
