//! The trust of an https target: the system roots plus `--ca-cert`, never turned off.

use std::sync::Arc;
use tokio_rustls::rustls;

/// Where systems keep their trusted roots as one PEM bundle (`SSL_CERT_FILE` first).
const SYSTEM_ROOTS: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
    "/usr/local/etc/openssl/cert.pem",
];

/// The system roots (from `SSL_CERT_FILE` or a usual bundle path) and `ca_pem`.
pub(super) fn tls_connector(ca_pem: Option<&[u8]>) -> Result<tokio_rustls::TlsConnector, String> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let system = std::env::var_os("SSL_CERT_FILE")
        .map(std::path::PathBuf::from)
        .into_iter()
        .chain(SYSTEM_ROOTS.iter().map(std::path::PathBuf::from))
        .find(|p| p.is_file());
    if let Some(bundle) = system.and_then(|p| std::fs::read(p).ok()) {
        for cert in rustls_pki_types::CertificateDer::pem_slice_iter(&bundle).flatten() {
            let _ = roots.add(cert);
        }
    }
    if let Some(pem) = ca_pem {
        for cert in rustls_pki_types::CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| format!("--ca-cert is not valid PEM: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("--ca-cert holds a certificate that was refused: {e}"))?;
        }
    }
    if roots.is_empty() {
        return Err(
            "no trusted root certificates: none in the system locations and no --ca-cert".into(),
        );
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

/// Checks a `--ca-cert` file: PEM holding at least one certificate. The error is one line.
pub fn check_ca_cert(pem: &[u8]) -> Result<(), String> {
    use rustls_pki_types::pem::PemObject;
    let certs = rustls_pki_types::CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("is not valid PEM: {e}"))?;
    if certs.is_empty() {
        return Err("holds no PEM certificate".into());
    }
    Ok(())
}
