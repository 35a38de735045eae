//! A scratch PostgreSQL database per test on the server of
//! `TEST_DATABASE_URL` (`.ci/run` sets it; unset, the machine's local
//! server at 127.0.0.1:5432 is used). These tests never skip: a server
//! that cannot be reached fails them.

/// The local server every machine of this project runs (trust auth).
const LOCAL: &str = "postgres://postgres@127.0.0.1:5432/test";

/// A fresh database, dropped (with any connection left over) when the
/// guard drops.
pub struct ScratchPg {
    admin: String,
    name: String,
    pub url: String,
}

impl ScratchPg {
    /// Creates `fe_<purpose>_<uuid>` on the test server.
    pub async fn create(purpose: &str) -> ScratchPg {
        let admin = std::env::var("TEST_DATABASE_URL").unwrap_or_else(|_| LOCAL.to_string());
        let name = format!("fe_{purpose}_{}", uuid::Uuid::new_v4().simple());
        let pool = sqlx::PgPool::connect(&admin).await.unwrap_or_else(|e| {
            panic!("PostgreSQL at TEST_DATABASE_URL (or {LOCAL}) is required: {e}")
        });
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        let base = admin
            .rsplit_once('/')
            .map_or(admin.as_str(), |(b, _)| b)
            .to_string();
        ScratchPg {
            url: format!("{base}/{name}"),
            admin,
            name,
        }
    }
}

impl Drop for ScratchPg {
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        // A runtime of its own: drop may run outside the test's runtime.
        let _ = std::thread::spawn(move || {
            tokio::runtime::Runtime::new().unwrap().block_on(async {
                if let Ok(pool) = sqlx::PgPool::connect(&admin).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .execute(&pool)
                        .await;
                }
            })
        })
        .join();
    }
}
