//! What every layer above the domain shares and no layer owns: the machine's clock and
//! random numbers (`sys`), strict JSON (`json`), the shared Host/Origin rule (`gate`), TLS
//! roots (`tls`), expiring caches (`expiring`), private key files (`keyfile`), log and
//! metric lines (`telemetry`), sealing and tamper-proof tokens (`secrets`) and the signing
//! secret's source (`secret_store`).

pub mod expiring;
pub mod gate;
pub mod json;
pub mod keyfile;
pub mod secret_store;
pub mod secrets;
pub mod sys;
pub mod telemetry;
pub mod tls;
