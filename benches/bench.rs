//! Placeholder replaced by the benchmark program (issue "Benchmarks").
fn main() {}
