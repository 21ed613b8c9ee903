//! The https mock's certificates: a CA and a leaf for `127.0.0.1` and `localhost` that it
//! signs, generated at start, so a client trusts the mock by its CA alone.

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::ServerConfig;

/// A TLS identity for the mock's listeners.
pub struct Identity {
    /// The CA certificate, PEM: what a client trusts.
    pub ca_pem: String,
    /// The server configuration presenting the leaf (and the CA) with `http/1.1` ALPN.
    pub config: Arc<ServerConfig>,
}

/// Generates a CA and a leaf whose SANs are `127.0.0.1` and `localhost`.
pub fn generate() -> Result<Identity, String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| format!("cannot make the {what}: {e}");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(|e| fail("CA", &e))?;
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "mcp-mock-http test CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate().map_err(|e| fail("CA key", &e))?;
    let ca = ca_params.self_signed(&ca_key).map_err(|e| fail("CA", &e))?;

    let names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
    let mut leaf_params = CertificateParams::new(names).map_err(|e| fail("certificate", &e))?;
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, "mcp-mock-http");
    leaf_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    leaf_params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    let leaf_key = KeyPair::generate().map_err(|e| fail("key", &e))?;
    let leaf = leaf_params
        .signed_by(&leaf_key, &ca, &ca_key)
        .map_err(|e| fail("certificate", &e))?;

    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let chain: Vec<CertificateDer<'static>> = vec![leaf.der().clone(), ca.der().clone()];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| fail("TLS configuration", &e))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| fail("TLS configuration", &e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Identity {
        ca_pem: ca.pem(),
        config: Arc::new(config),
    })
}
