//! The worker Lambda's view of the table's stream: each new job item names
//! its tenant and id; the runner does the rest. A new data-subject request
//! is run the same way (`privacy::run_data_request`), and an e-mail the
//! table's TTL removed takes its files with it (`privacy::email_removed`). Records that cannot be
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

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_lambda_events::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};

use super::{Ran, Runner, run};
use inbox_store::stream::{StreamItem, item_of};

/// Runs the jobs of a stream batch, one after the other (a batch comes from
/// one shard, in order).
pub async fn handle(runner: &Runner, event: Event) -> DynamoDbEventResponse {
    let mut response = DynamoDbEventResponse::default();
    for mut record in event.records {
        // Taken, not copied: nothing below reads the keys or the image again.
        let (keys, image) = (std::mem::take(&mut record.change.keys), std::mem::take(&mut record.change.new_image));
        let read = item_of(&record.event_name, keys, image);
        let (tenant, id) = match read {
            Ok(StreamItem::Audit { partition, record: sk }) => {
                audit_guard(&record, &partition, &sk);
                continue;
            }
            Ok(StreamItem::NewJob { tenant, id }) => (tenant, id),
            Ok(StreamItem::NewDataRequest { org, id }) => {
                if let Err(error) = super::privacy::run_data_request(runner, &org, &id).await {
                    tracing::error!(request = %id, %error, "data request not recorded; asking for redelivery");
                    response.batch_item_failures.push(failed(&record));
                }
                continue;
            }
            Ok(StreamItem::EmailRemoved { tenant, id }) => {
                if let Err(error) = super::privacy::email_removed(runner, &tenant, &id).await {
                    tracing::error!(email_id = %id, %error, "a removed e-mail's files were not deleted; asking for redelivery");
                    response.batch_item_failures.push(failed(&record));
                }
                continue;
            }
            // Other items (and other changes of a job) never pass the
            // subscription's filter on AWS.
            Ok(StreamItem::Other) => continue,
            // A job item that cannot be read is a defect worth seeing, not a silent drop.
            Err(error) => {
                tracing::error!(event = %record.event_id, %error, "a job's stream record could not be read; dropped");
                continue;
            }
        };
        match run(runner, &tenant, &id).await {
            Ok(Ran::Finished(status)) => tracing::info!(job = %id, ?status, "stream job done"),
            Ok(Ran::Skipped) => tracing::info!(job = %id, "stream job already done"),
            Ok(Ran::AwaitingInput) => tracing::info!(job = %id, "stream job waits for input"),
            // Asking for redelivery: once the lease lapses, the job runs.
            // Dropping the record would lose a job whose leaseholder died.
            Ok(Ran::Busy) => {
                tracing::info!(job = %id, "stream job leased elsewhere; asking for redelivery");
                let mut failure = DynamoDbBatchItemFailure::default();
                failure.item_identifier = record.change.sequence_number.clone();
                response.batch_item_failures.push(failure);
            }
            Err(error) => {
                tracing::error!(job = %id, %error, "stream job not recorded; asking for redelivery");
                let mut failure = DynamoDbBatchItemFailure::default();
                failure.item_identifier = record.change.sequence_number.clone();
                response.batch_item_failures.push(failure);
            }
        }
    }
    response
}

/// The batch item failure that asks for `record` again.
fn failed(record: &EventRecord) -> DynamoDbBatchItemFailure {
    let mut failure = DynamoDbBatchItemFailure::default();
    failure.item_identifier = record.change.sequence_number.clone();
    failure
}

/// Reports a change or removal of an audit record other than its expiry.
fn audit_guard(record: &EventRecord, partition: &str, sk: &str) {
    if record.event_name == "INSERT" {
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
    tracing::error!(pk = %partition, sk = %sk, event = %record.event_name, "an audit record was changed or removed");
    inbox_support::telemetry::Emf {
        dimensions: &[&[]],
        metrics: &[("AuditTampered", "Count", 1.0)],
        properties: &[
            ("Partition", serde_json::Value::from(partition)),
            ("Record", serde_json::Value::from(sk)),
            ("Event", serde_json::Value::from(record.event_name.as_str())),
        ],
    }
    .emit();
}
