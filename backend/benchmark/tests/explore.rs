mod common;
use serenqa_benchmark::generate::{generate, GenConfig};

#[test]
#[ignore]
fn explore() {
    let g = common::hetionet();
    let t = std::time::Instant::now();
    let n: usize = std::env::var("NQ").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
    let (qs, reps) = generate(g, &GenConfig { questions: n, ..Default::default() });
    eprintln!("generated {} in {:?}", qs.len(), t.elapsed());
    for r in &reps { eprintln!("{r:?}"); }
    let mean = qs.iter().map(|q| q.answers.len()).sum::<usize>() as f64 / qs.len() as f64;
    eprintln!("mean answers {mean:.2}");
    for q in qs.iter().step_by((qs.len() / 40).max(1)) {
        eprintln!("[{}] {} | {} | {}", q.pattern, q.text, q.answers.iter().map(|&a| g.name(a)).collect::<Vec<_>>().join("; "), q.category);
        eprintln!("   {}", serenqa_benchmark::cypher::render(g, &q.query).replace('\n', " "));
    }
}

#[test]
#[ignore]
fn explore_build() {
    use serenqa_benchmark::build::{build, BuildConfig};
    let g = common::hetionet();
    let n: usize = std::env::var("NQ").ok().and_then(|s| s.parse().ok()).unwrap_or(300);
    let t = std::time::Instant::now();
    let model = serenqa_model::Model::compute(g, &Default::default(), false);
    eprintln!("model in {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let scorers = serenqa_benchmark::partition::offline_scorers(g, Some(&model.marginals));
    let mut cfg = BuildConfig::default();
    cfg.gen.questions = n;
    let b = build(g, Some(&model), &scorers, None, &cfg).unwrap();
    eprintln!("build in {:?} {:?}", t.elapsed(), b.timings);
    eprintln!("{}", serde_json::to_string_pretty(&b.manifest).unwrap());
    let dir = std::path::Path::new("/tmp/bench5");
    b.write(g, dir).unwrap();
}
