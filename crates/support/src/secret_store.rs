//! Where the signing secret lives on AWS: Secrets Manager, read by ARN once
//! per container during INIT (in parallel with the rest of INIT, so a cold
//! start does not grow by a round trip). The version labelled `AWSCURRENT`
//! signs; `AWSPREVIOUS`, if there is one, still verifies, so a rotation
//! (a new value put into the secret) does not invalidate what the old value
//! sealed. Without an ARN, the secrets given in the configuration are used
//! as they are (`SIGNING_SECRET`, or locally the generated file).

use std::time::Duration;

use aws_sdk_secretsmanager::Client;
use aws_sdk_secretsmanager::config::{Credentials, Region};
use aws_sdk_secretsmanager::error::SdkError;
use aws_sdk_secretsmanager::operation::get_secret_value::GetSecretValueError;

/// Where the secrets come from.
#[derive(Debug, Clone)]
pub struct SecretSource {
    /// The secret's ARN (`SIGNING_SECRET_ARN`).
    pub arn: Option<String>,
    pub region: String,
    /// A local Secrets Manager-compatible server (`SECRETS_MANAGER_ENDPOINT`).
    pub endpoint: Option<String>,
    /// Used when there is no ARN.
    pub configured: Vec<String>,
    /// Each secret must be at least this long (32 on Lambda).
    pub min_len: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("cannot read the signing secret {arn}: {reason}")]
    Unreadable { arn: String, reason: String },
    #[error("the signing secret {arn} ({stage}) is shorter than {min} characters or not text")]
    Weak { arn: String, stage: &'static str, min: usize },
}

/// The signing secrets, the one that signs first.
pub async fn signing_secrets(source: &SecretSource) -> Result<Vec<String>, SecretError> {
    let Some(arn) = &source.arn else { return Ok(source.configured.clone()) };
    let client = client(source).await;
    let (current, previous) = tokio::join!(version(&client, arn, "AWSCURRENT"), version(&client, arn, "AWSPREVIOUS"));
    let mut secrets = Vec::with_capacity(2);
    for (stage, found) in [("AWSCURRENT", current?), ("AWSPREVIOUS", previous?)] {
        match found {
            Some(secret) if secret.chars().count() >= source.min_len => secrets.push(secret),
            Some(_) => return Err(SecretError::Weak { arn: arn.clone(), stage, min: source.min_len }),
            None if stage == "AWSCURRENT" => {
                return Err(SecretError::Weak { arn: arn.clone(), stage, min: source.min_len });
            }
            None => {}
        }
    }
    Ok(secrets)
}

async fn client(source: &SecretSource) -> Client {
    let timeouts = aws_config::timeout::TimeoutConfig::builder()
        .connect_timeout(Duration::from_secs(1))
        .operation_attempt_timeout(Duration::from_secs(2))
        .operation_timeout(Duration::from_secs(5))
        .build();
    let mut loader = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .region(Region::new(source.region.clone()))
        .timeout_config(timeouts)
        .http_client(crate::tls::sdk_http_client());
    if let Some(endpoint) = &source.endpoint {
        // The local server accepts any credentials; never look for real ones.
        loader =
            loader.endpoint_url(endpoint).credentials_provider(Credentials::new("local", "local", None, None, "local"));
    }
    Client::new(&loader.load().await)
}

/// One version of the secret by stage; `None` when the stage has no version
/// (a secret never rotated has no `AWSPREVIOUS`).
async fn version(client: &Client, arn: &str, stage: &'static str) -> Result<Option<String>, SecretError> {
    match client.get_secret_value().secret_id(arn).version_stage(stage).send().await {
        Ok(out) => Ok(out.secret_string),
        Err(SdkError::ServiceError(e)) if matches!(e.err(), GetSecretValueError::ResourceNotFoundException(_)) => {
            if stage == "AWSCURRENT" {
                Err(SecretError::Unreadable { arn: arn.to_owned(), reason: "no such secret".into() })
            } else {
                Ok(None)
            }
        }
        Err(e) => {
            let reason = aws_sdk_secretsmanager::error::DisplayErrorContext(&e).to_string();
            Err(SecretError::Unreadable { arn: arn.to_owned(), reason })
        }
    }
}
