//! Redis for tests: [`TestRedis`].

use serenqa_pipeline::queue::{LocalRedis, QueueResult, Redis};

/// Says so on the real stderr (not captured by the test harness, so it shows in CI logs).
fn skipped(why: &str) {
    serenqa_graph::datadir::missing_resource(&format!("no Redis ({why})"));
}

/// The Redis of a test: `$SERENQA_REDIS_URL`, else a [`LocalRedis`] when `redis-server` is
/// installed, else None (the test prints `SKIPPED: no Redis`). `db` selects a database so
/// that tests sharing one server do not see each other's runs; it is flushed first.
pub struct TestRedis {
    pub url: String,
    _local: Option<LocalRedis>,
}

impl TestRedis {
    pub async fn get(db: u8) -> Option<TestRedis> {
        let (base, local) = match std::env::var("SERENQA_REDIS_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
        {
            Some(u) => (u.trim().trim_end_matches('/').to_string(), None),
            None => match LocalRedis::start() {
                Ok(l) => (l.url.clone(), Some(l)),
                Err(e) => {
                    skipped(&format!("SERENQA_REDIS_URL unset and {e}"));
                    return None;
                }
            },
        };
        // Replace a database number already in the URL.
        let base = match base.rfind('/') {
            Some(i)
                if i > base.find("://").map(|s| s + 2).unwrap_or(0)
                    && base[i + 1..].chars().all(|c| c.is_ascii_digit()) =>
            {
                base[..i].to_string()
            }
            _ => base,
        };
        let url = format!("{base}/{db}");
        let r = match Redis::connect(&url).await {
            Ok(r) => r,
            Err(e) => {
                skipped(&e.to_string());
                return None;
            }
        };
        let _: QueueResult<String> = r.query(&redis::cmd("FLUSHDB")).await;
        Some(TestRedis { url, _local: local })
    }
}
