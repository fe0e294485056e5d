//! Attachment bytes: one object per attachment in the attachments bucket,
//! the only code that imports `aws_sdk_s3`.
//!
//! Keys begin with the tenant like every partition key (`keys`):
//! `{org}/{ws}/{email id}/{n}`, `n` the attachment's index in the e-mail's
//! record. Ids from a request are only ever appended to the caller's own
//! tenant prefix, so an object of another workspace cannot be named. The
//! bucket is private and encrypted (template.yaml); a download is a
//! presigned GET of a few minutes, never a public object.
//!
//! Locally the bucket lives in the same local server as the table (moto
//! emulates S3 on the same port, path-style URLs): the code under test is the
//! code that runs on AWS, SDK calls included (`create_table` makes the
//! bucket too).

use std::time::Duration;

use aws_sdk_s3::Client;
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::primitives::ByteStream;

use super::StoreError;
use inbox_domain::Tenant;

/// The largest object the worker reads back: the largest message the API
/// takes holds no larger attachment.
pub const MAX_OBJECT_BYTES: usize = 4 * 1024 * 1024;

/// How long a download link works.
pub const LINK_SECS: u64 = 300;

/// The attachments bucket.
#[derive(Clone)]
pub struct Objects {
    client: Client,
    bucket: String,
}

impl Objects {
    pub(crate) fn new(client: Client, bucket: String) -> Objects {
        Objects { client, bucket }
    }

    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// The key of an e-mail's `n`th attachment.
    pub fn key(t: &Tenant, email_id: &str, n: usize) -> String {
        format!("{}/{}/{email_id}/{n}", t.org, t.workspace)
    }

    /// Stores one attachment's bytes. S3 checks them against `sha256` (the
    /// record's digest, hex) before it stores them.
    pub async fn put(&self, key: &str, bytes: Vec<u8>, content_type: &str, sha256: &[u8]) -> Result<(), StoreError> {
        use base64::Engine as _;
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .content_type(content_type)
            .checksum_sha256(base64::engine::general_purpose::STANDARD.encode(sha256))
            .body(ByteStream::from(bytes))
            .send()
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    /// One attachment's bytes, `None` when there is no such object; more
    /// than `MAX_OBJECT_BYTES` is `Corrupt` (the API never stores one).
    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let out = match self.client.get_object().bucket(&self.bucket).key(key).send().await {
            Ok(out) => out,
            Err(e) if e.as_service_error().is_some_and(|s| s.is_no_such_key()) => return Ok(None),
            Err(e) => return Err(unavailable(e)),
        };
        if out.content_length().is_some_and(|n| n < 0 || n as u64 > MAX_OBJECT_BYTES as u64) {
            return Err(StoreError::Corrupt(format!("object {key} is larger than {MAX_OBJECT_BYTES} bytes")));
        }
        let bytes = out.body.collect().await.map_err(|e| StoreError::Unavailable(Box::new(e)))?.into_bytes();
        if bytes.len() > MAX_OBJECT_BYTES {
            return Err(StoreError::Corrupt(format!("object {key} is larger than {MAX_OBJECT_BYTES} bytes")));
        }
        Ok(Some(bytes.to_vec()))
    }

    /// Removes objects (a failed or duplicate ingestion's); a missing one is
    /// no error.
    pub async fn delete(&self, keys: &[String]) -> Result<(), StoreError> {
        let deletes = keys.iter().map(|key| self.client.delete_object().bucket(&self.bucket).key(key).send());
        for outcome in futures_util::future::join_all(deletes).await {
            outcome.map_err(unavailable)?;
        }
        Ok(())
    }

    /// A link that downloads one object for `LINK_SECS` seconds, naming the
    /// file as the sender did (`Content-Disposition: attachment`, so a
    /// browser saves it instead of rendering it in the link's origin).
    pub async fn download_link(&self, key: &str, file_name: &str, content_type: &str) -> Result<String, StoreError> {
        let config = PresigningConfig::expires_in(Duration::from_secs(LINK_SECS))
            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let request = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .response_content_disposition(content_disposition(file_name))
            .response_content_type(content_type)
            .presigned(config)
            .await
            .map_err(unavailable)?;
        Ok(request.uri().to_owned())
    }

    /// Makes the bucket if it is missing (the local server: on AWS the
    /// template makes it). True when it was made.
    pub async fn create_bucket(&self) -> Result<bool, StoreError> {
        match self.client.create_bucket().bucket(&self.bucket).send().await {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_bucket_already_owned_by_you() || s.is_bucket_already_exists()) =>
            {
                Ok(false)
            }
            Err(e) => Err(unavailable(e)),
        }
    }

    /// Every key under a prefix (tests and the operator's tools).
    pub async fn keys_under(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let mut keys = Vec::new();
        let mut token = None;
        loop {
            let out = (self.client.list_objects_v2().bucket(&self.bucket).prefix(prefix))
                .set_continuation_token(token)
                .send()
                .await
                .map_err(unavailable)?;
            keys.extend(out.contents().iter().filter_map(|o| o.key().map(str::to_owned)));
            match out.next_continuation_token() {
                Some(next) if out.is_truncated() == Some(true) => token = Some(next.to_owned()),
                _ => return Ok(keys),
            }
        }
    }
}

/// `attachment; filename*=UTF-8''…` (RFC 6266 with RFC 8187's encoding):
/// the sender's name, every byte outside the token characters escaped, so
/// no quote, semicolon or line break reaches the header.
fn content_disposition(file_name: &str) -> String {
    const KEEP: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'!')
        .remove(b'#')
        .remove(b'$')
        .remove(b'&')
        .remove(b'+')
        .remove(b'-')
        .remove(b'.')
        .remove(b'^')
        .remove(b'_')
        .remove(b'`')
        .remove(b'|')
        .remove(b'~');
    format!("attachment; filename*=UTF-8''{}", percent_encoding::utf8_percent_encode(file_name, KEEP))
}

fn unavailable<E: std::error::Error + Send + Sync + 'static>(error: E) -> StoreError {
    StoreError::Unavailable(Box::new(error))
}

#[cfg(test)]
mod tests {
    use super::content_disposition;

    #[test]
    fn a_file_name_cannot_break_out_of_its_header_value() {
        assert_eq!(content_disposition("boleto nov.pdf"), "attachment; filename*=UTF-8''boleto%20nov.pdf");
        assert_eq!(content_disposition("a\";\r\nX: y.pdf"), "attachment; filename*=UTF-8''a%22%3B%0D%0AX%3A%20y.pdf");
        assert_eq!(content_disposition("cobrança.pdf"), "attachment; filename*=UTF-8''cobran%C3%A7a.pdf");
    }
}
