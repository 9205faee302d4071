use sim_core::sim::{Config, Sim};
use sim_tokio::TokioSim;
use std::time::Duration;

#[test]
fn interval_and_spawn_local() {
    let mut sim = Sim::new(Config::default());
    sim.tokio_client("client", |_| async {
        let start = tokio::time::Instant::now();
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        for _ in 0..3 {
            tick.tick().await;
        }
        tokio::task::spawn_local(async {}).await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_millis(200));
        assert_eq!(sim_core::time::now().as_nanos(), 200_000_000);
    });
    let report = sim.run_seed(0);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
}
