//! A test certificate authority: one CA whose certificates the server under test trusts
//! through `SSL_CERT_FILE`, so a fake origin and a fake proxy can both speak TLS.

use std::sync::Arc;

/// A fresh CA.
pub struct TestCa {
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    pem: String,
    der: rustls::pki_types::CertificateDer<'static>,
}

impl TestCa {
    /// A new self-signed CA.
    pub fn new() -> TestCa {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        TestCa {
            pem: cert.pem(),
            der: cert.der().clone(),
            issuer: rcgen::Issuer::new(params, key),
        }
    }

    /// The CA certificate (PEM) a client must trust.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// A certificate for 127.0.0.1 and localhost and its key, both PEM (for servers the
    /// tests start as programs, such as redis-server).
    pub fn leaf_pem(&self) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .unwrap();
        let leaf = params.signed_by(&key, &self.issuer).unwrap();
        (leaf.pem(), key.serialize_pem())
    }

    /// A TLS server configuration with a certificate for 127.0.0.1 and localhost.
    pub fn server_config(&self) -> Arc<rustls::ServerConfig> {
        let key = rcgen::KeyPair::generate().unwrap();
        let params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .unwrap();
        let leaf = params.signed_by(&key, &self.issuer).unwrap();
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone(), self.der.clone()], key)
        .unwrap();
        Arc::new(config)
    }
}

impl Default for TestCa {
    fn default() -> Self {
        TestCa::new()
    }
}
