//! Creates the table as `template.yaml` defines it (pk/sk, GSI `gsi1`, TTL on
//! `expires_at`, stream with new images, on-demand billing), for local runs
//! and tests. Creating a table that exists is not an error.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection, ProjectionType,
    ScalarAttributeType, StreamSpecification, StreamViewType, TimeToLiveSpecification,
};

use super::keys::{GSI1, GSI1_PK, GSI1_SK, PK, SK, TTL};
use super::{Store, StoreError};

fn key(name: &str, kind: KeyType) -> Result<KeySchemaElement, StoreError> {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()
        .map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn attr(name: &str) -> Result<AttributeDefinition, StoreError> {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(ScalarAttributeType::S)
        .build()
        .map_err(|e| StoreError::Corrupt(e.to_string()))
}

impl Store {
    /// Creates the table with its index, stream and TTL, and the attachments
    /// bucket when it is missing; `false` when the table already existed
    /// (then nothing of it is changed).
    pub async fn create_table(&self) -> Result<bool, StoreError> {
        self.objects().create_bucket().await?;
        let gsi = GlobalSecondaryIndex::builder()
            .index_name(GSI1)
            .key_schema(key(GSI1_PK, KeyType::Hash)?)
            .key_schema(key(GSI1_SK, KeyType::Range)?)
            .projection(Projection::builder().projection_type(ProjectionType::All).build())
            .build()
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let created = self
            .client()
            .create_table()
            .table_name(self.table())
            .billing_mode(BillingMode::PayPerRequest)
            .attribute_definitions(attr(PK)?)
            .attribute_definitions(attr(SK)?)
            .attribute_definitions(attr(GSI1_PK)?)
            .attribute_definitions(attr(GSI1_SK)?)
            .key_schema(key(PK, KeyType::Hash)?)
            .key_schema(key(SK, KeyType::Range)?)
            .global_secondary_indexes(gsi)
            .stream_specification(
                StreamSpecification::builder()
                    .stream_enabled(true)
                    .stream_view_type(StreamViewType::NewImage)
                    .build()
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?,
            )
            .send()
            .await;
        match created {
            Ok(_) => {}
            Err(e) if e.as_service_error().is_some_and(|s| s.is_resource_in_use_exception()) => return Ok(false),
            Err(e) => return Err(e.into()),
        }
        self.client()
            .update_time_to_live()
            .table_name(self.table())
            .time_to_live_specification(
                TimeToLiveSpecification::builder()
                    .attribute_name(TTL)
                    .enabled(true)
                    .build()
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?,
            )
            .send()
            .await?;
        Ok(true)
    }
}
