//! The one TLS trust store of the process: Mozilla's root certificates,
//! compiled in (`webpki-root-certs`), shared by every HTTPS client — the
//! JWKS fetcher, the webhook client and the DynamoDB SDK. Compiled in, so a
//! cold start reads no certificate files (the system store was read once per
//! client, three times in all), and the same on every machine the function
//! runs on.

use std::sync::{Arc, OnceLock};

use aws_smithy_http_client::tls::{self, TlsContext, TrustStore};
use base64::Engine as _;
use rustls::RootCertStore;

/// The compiled-in roots. Every one parses; one that did not would only be left out.
fn compiled_roots() -> RootCertStore {
    let mut roots = RootCertStore::empty();
    let _ = roots.add_parsable_certificates(webpki_root_certs::TLS_SERVER_ROOT_CERTS.iter().cloned());
    roots
}

/// A rustls client configuration trusting `roots`, with aws-lc's provider
/// (or rustls's default builder should it refuse the protocol versions).
fn trusting(roots: RootCertStore) -> rustls::ClientConfig {
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
        .with_safe_default_protocol_versions()
        .map(|b| b.with_root_certificates(roots.clone()).with_no_client_auth())
        .unwrap_or_else(|_| rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth())
}

/// A rustls client configuration trusting the compiled-in roots (built once).
pub fn client_config() -> rustls::ClientConfig {
    static CONFIG: OnceLock<rustls::ClientConfig> = OnceLock::new();
    CONFIG.get_or_init(|| trusting(compiled_roots())).clone()
}

/// A rustls client configuration trusting the compiled-in roots and the
/// certificate authorities of a PEM file as well: the development
/// authorization server's fetcher of client documents served over https on
/// loopback, in tests (`DEV_CLIENT_DOCUMENT_CA`). Never used by a deployed
/// function.
#[cfg(feature = "dev")]
pub fn client_config_also_trusting(pem: &[u8]) -> Result<rustls::ClientConfig, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let extra: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(pem).collect::<Result<_, _>>().map_err(|e| format!("PEM: {e}"))?;
    if extra.is_empty() {
        return Err("no certificate in the PEM file".into());
    }
    let mut roots = compiled_roots();
    for cert in extra {
        roots.add(cert).map_err(|e| format!("certificate refused: {e}"))?;
    }
    Ok(trusting(roots))
}

/// An HTTPS client for an AWS SDK client (DynamoDB, Secrets Manager),
/// trusting the same roots (its own loader would read the system store).
/// One per SDK client, each with its own connection pool: a kept-alive
/// connection belongs to the runtime that opened it, and a pool shared by
/// two runtimes (the tests run one each) would hand one of them a
/// connection whose other end went with the other runtime. The roots' text
/// is made once.
pub fn sdk_http_client() -> aws_sdk_dynamodb::config::SharedHttpClient {
    static PEM: OnceLock<String> = OnceLock::new();
    let pem = PEM.get_or_init(roots_pem);
    let trust = TrustStore::empty().with_native_roots(false).with_pem_certificate(pem.as_bytes().to_vec());
    let context = TlsContext::builder().with_trust_store(trust).build();
    let builder = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::Rustls(tls::rustls_provider::CryptoMode::AwsLc));
    match context {
        Ok(context) => builder.tls_context(context).build_https(),
        Err(error) => {
            tracing::warn!(%error, "compiled-in roots refused; the SDK uses the system store");
            builder.build_https()
        }
    }
}

/// The compiled-in roots as PEM (the form the SDK's trust store takes).
fn roots_pem() -> String {
    let b64 = base64::engine::general_purpose::STANDARD;
    webpki_root_certs::TLS_SERVER_ROOT_CERTS
        .iter()
        .map(|cert| format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n", b64.encode(cert.as_ref())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;

    #[test]
    fn every_compiled_in_root_reaches_both_trust_stores() {
        let total = webpki_root_certs::TLS_SERVER_ROOT_CERTS.len();
        assert!(total > 100, "{total}");
        let from_pem: Vec<CertificateDer<'_>> =
            CertificateDer::pem_slice_iter(roots_pem().as_bytes()).collect::<Result<_, _>>().unwrap();
        assert_eq!(from_pem.len(), total);
        assert_eq!(from_pem.first().unwrap().as_ref(), webpki_root_certs::TLS_SERVER_ROOT_CERTS[0].as_ref());
        let mut roots = RootCertStore::empty();
        let (added, _) = roots.add_parsable_certificates(from_pem);
        assert!(added >= total - 2, "{added} of {total}");
        assert!(client_config().alpn_protocols.is_empty());
        let _client = sdk_http_client();
    }
}
