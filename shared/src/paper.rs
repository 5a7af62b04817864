//! The SerenQA paper's published results (AAAI-26, Tables 2 and 3), as a reference group for
//! the leaderboard. Figures only, copied as numbers from `../shared/reference/serenqa-paper.txt`
//! (a test checks every one against that text when it is beside the repository).
//!
//! They are **not comparable** with this app's runs, and the leaderboard never ranks them
//! against them: the paper built its benchmark on the Clinical Knowledge Graph (CKG, about 20
//! million nodes, in Neo4j), asked all of its questions, and scored with LLM judges and an
//! LLM-ensemble partition; a run here uses Hetionet, this app's generated questions (often a
//! `--limit` subset), and offline runs use code-based proxies. [`NOTE`] says so on the page.

/// What differs, in one sentence for the page.
pub const NOTE: &str = "Published in the SerenQA paper (AAAI-26, Tables 2–3), for orientation only and never ranked with the runs above: the paper's benchmark is built on the Clinical Knowledge Graph (about 20 million nodes), asks all of its questions and scores with LLM judges and LLM-ensemble partitions; runs here use Hetionet, this app's questions (often a subset) and, offline, code-based proxies.";

/// The label the leaderboard gives a paper row.
pub fn row_label(model: &str, without_summary: bool) -> String {
    if without_summary {
        format!("{model} (w.o. summary) — paper")
    } else {
        format!("{model} — paper")
    }
}

/// Table 2: model, then Hit, F1, Exe. (%) for One-Hop, Two-Hop, Multiple(3+)-Hop, Intersection.
pub const TABLE2: &[(&str, [f64; 12])] = &[
    (
        "DeepSeek-V3",
        [
            20.45, 78.71, 72.88, 3.46, 10.71, 9.86, 1.97, 6.22, 6.55, 2.64, 7.15, 8.03,
        ],
    ),
    (
        "GPT-4o",
        [
            19.71, 77.16, 60.17, 2.08, 6.36, 7.89, 1.40, 4.20, 4.85, 1.56, 4.65, 5.21,
        ],
    ),
    (
        "Claude-3.5-Haiku",
        [
            13.28, 48.54, 48.73, 9.78, 39.01, 32.89, 4.43, 8.64, 14.08, 1.38, 3.90, 4.66,
        ],
    ),
    (
        "Llama-3.3-70B",
        [
            19.28, 70.67, 74.58, 16.63, 44.34, 56.57, 2.98, 10.16, 11.89, 4.80, 9.60, 16.05,
        ],
    ),
    (
        "DeepSeek-R1-70B",
        [
            19.87, 69.07, 80.08, 12.03, 37.00, 43.42, 2.97, 8.06, 13.11, 3.49, 6.16, 16.46,
        ],
    ),
    (
        "Med42-V2-70B",
        [
            18.34, 69.43, 69.92, 5.92, 19.12, 19.74, 0.23, 0.51, 1.21, 0.08, 0.13, 0.68,
        ],
    ),
    (
        "Qwen3-32B",
        [
            0.37, 1.27, 1.27, 0.16, 0.65, 0.65, 0.24, 0.36, 0.48, 0.00, 0.00, 0.00,
        ],
    ),
    (
        "DeepSeek-R1-32B",
        [
            17.90, 65.23, 68.22, 3.06, 5.72, 7.24, 1.87, 4.50, 5.58, 0.79, 1.84, 3.16,
        ],
    ),
    (
        "Qwen3-8B",
        [
            10.07, 37.24, 39.83, 0.98, 2.87, 3.95, 0.90, 2.01, 4.85, 1.58, 1.91, 5.62,
        ],
    ),
    (
        "DeepSeek-R1-8B",
        [
            1.27, 3.41, 5.51, 0.00, 0.00, 0.00, 0.04, 0.24, 0.24, 0.00, 0.00, 0.00,
        ],
    ),
    (
        "Med42-V2-8B",
        [
            8.11, 23.90, 49.15, 1.05, 3.31, 3.97, 1.71, 4.07, 4.12, 0.04, 0.13, 0.14,
        ],
    ),
    (
        "Qwen3-1.7B",
        [
            0.84, 3.72, 11.86, 0.65, 1.98, 3.29, 0.00, 0.00, 0.24, 1.08, 1.56, 2.74,
        ],
    ),
    (
        "DeepSeek-R1-1.5B",
        [
            0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00,
        ],
    ),
];

/// Table 3 (upper), subgraph reasoning: model, then Faithful., Compre., SerenCov for the LLM
/// Ensemble, Expert Crowdsourced and RNS Guided partitions.
pub const TABLE3_REASONING: &[(&str, [f64; 9])] = &[
    (
        "DeepSeek-V3",
        [
            2.283, 3.341, 0.101, 2.306, 3.340, 0.100, 2.253, 3.326, 0.106,
        ],
    ),
    (
        "Llama-3.3-70B",
        [
            2.519, 3.842, 0.070, 2.553, 3.853, 0.068, 2.531, 3.829, 0.075,
        ],
    ),
    (
        "DeepSeek-R1-70B",
        [
            2.573, 2.206, 0.223, 2.572, 2.238, 0.204, 2.582, 2.202, 0.217,
        ],
    ),
    (
        "Qwen-2.5-72B",
        [
            2.024, 2.683, 0.153, 2.093, 2.715, 0.152, 2.114, 2.719, 0.155,
        ],
    ),
    (
        "Mixtral-8x7B",
        [
            2.271, 2.963, 0.642, 2.272, 2.958, 0.610, 2.347, 2.924, 0.632,
        ],
    ),
    (
        "Qwen-2.5-32B",
        [
            2.243, 2.929, 0.148, 2.255, 2.910, 0.146, 2.260, 2.886, 0.152,
        ],
    ),
    (
        "Gamma-2-27B",
        [
            2.365, 3.410, 0.088, 2.381, 3.439, 0.084, 2.385, 3.415, 0.089,
        ],
    ),
    (
        "Mistral-24B",
        [
            2.114, 3.016, 0.141, 2.114, 3.048, 0.136, 2.134, 3.049, 0.141,
        ],
    ),
    (
        "Qwen-2.5-7B",
        [
            1.920, 1.817, 0.592, 1.900, 1.848, 0.580, 1.955, 1.832, 0.593,
        ],
    ),
];

/// Table 3 (lower), serendipity exploration: model, without the summary (the paper's
/// "w.o. summary" row under it), then Relevance, TypeMatch, SerenHit per partition.
pub const TABLE3_EXPLORATION: &[(&str, bool, [f64; 9])] = &[
    (
        "DeepSeek-V3",
        false,
        [
            2.436, 0.482, 0.048, 2.494, 0.462, 0.061, 2.538, 0.463, 0.077,
        ],
    ),
    (
        "DeepSeek-V3",
        true,
        [
            2.447, 0.482, 0.050, 2.482, 0.463, 0.095, 2.510, 0.468, 0.134,
        ],
    ),
    (
        "Llama-3.3-70B",
        false,
        [
            2.537, 0.502, 0.046, 2.559, 0.483, 0.067, 2.594, 0.478, 0.106,
        ],
    ),
    (
        "Llama-3.3-70B",
        true,
        [
            2.544, 0.505, 0.043, 2.565, 0.478, 0.086, 2.630, 0.483, 0.127,
        ],
    ),
    (
        "DeepSeek-R1-70B",
        false,
        [
            1.935, 0.424, 0.030, 2.000, 0.409, 0.034, 2.033, 0.418, 0.049,
        ],
    ),
    (
        "DeepSeek-R1-70B",
        true,
        [
            1.972, 0.438, 0.035, 1.987, 0.413, 0.037, 2.052, 0.419, 0.053,
        ],
    ),
    (
        "Qwen-2.5-72B",
        false,
        [
            2.264, 0.415, 0.023, 2.345, 0.406, 0.041, 2.405, 0.400, 0.059,
        ],
    ),
    (
        "Qwen-2.5-72B",
        true,
        [
            2.269, 0.428, 0.028, 2.337, 0.416, 0.050, 2.409, 0.412, 0.070,
        ],
    ),
    (
        "Mixtral-8x7B",
        false,
        [
            1.947, 0.256, 0.010, 2.033, 0.254, 0.015, 2.013, 0.230, 0.024,
        ],
    ),
    (
        "Mixtral-8x7B",
        true,
        [
            2.158, 0.324, 0.016, 2.250, 0.312, 0.022, 2.220, 0.306, 0.042,
        ],
    ),
    (
        "Qwen-2.5-32B",
        false,
        [
            2.294, 0.441, 0.036, 2.331, 0.426, 0.045, 2.378, 0.429, 0.065,
        ],
    ),
    (
        "Qwen-2.5-32B",
        true,
        [
            2.304, 0.453, 0.037, 2.328, 0.431, 0.068, 2.390, 0.438, 0.105,
        ],
    ),
    (
        "Gamma-2-27B",
        false,
        [
            2.357, 0.450, 0.033, 2.379, 0.414, 0.057, 2.443, 0.431, 0.080,
        ],
    ),
    (
        "Gamma-2-27B",
        true,
        [
            2.343, 0.448, 0.032, 2.376, 0.412, 0.054, 2.425, 0.402, 0.081,
        ],
    ),
    (
        "Mistral-24B",
        false,
        [
            1.855, 0.195, 0.008, 1.959, 0.184, 0.016, 2.005, 0.185, 0.026,
        ],
    ),
    (
        "Mistral-24B",
        true,
        [
            1.903, 0.212, 0.011, 1.962, 0.204, 0.023, 2.006, 0.213, 0.035,
        ],
    ),
    (
        "Qwen-2.5-7B",
        false,
        [
            1.636, 0.221, 0.022, 1.721, 0.229, 0.026, 1.708, 0.215, 0.041,
        ],
    ),
    (
        "Qwen-2.5-7B",
        true,
        [
            1.487, 0.160, 0.018, 1.550, 0.175, 0.018, 1.547, 0.158, 0.027,
        ],
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every figure appears, in order, on its model's line of the paper's text (when the
    /// reference text is beside the repository; under CI it must be).
    #[test]
    fn the_figures_are_the_papers() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/reference/serenqa-paper.txt"
        );
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                assert!(std::env::var_os("CI").is_none(), "{path}: {e}");
                eprintln!("skipped: {path}: {e}");
                return;
            }
        };
        let lines: Vec<&str> = text.lines().collect();
        let numbers = |l: &str| -> Vec<String> {
            l.split_whitespace()
                .filter(|w| w.contains('.') && w.parse::<f64>().is_ok())
                .map(str::to_string)
                .collect()
        };
        // The figures of one row as the paper prints them.
        let check = |name: &str, wo: bool, values: &[f64], digits: usize, from: usize| -> usize {
            let want: Vec<String> = values.iter().map(|v| format!("{v:.digits$}")).collect();
            let at = (from..lines.len())
                .find(|&i| {
                    let l = lines[i];
                    let named = if wo {
                        l.contains("w.o. summary")
                    } else {
                        l.split_whitespace().next() == Some(name)
                    };
                    named && numbers(l) == want
                })
                .unwrap_or_else(|| {
                    panic!("{name} (w.o. summary: {wo}): {want:?} not in the paper")
                });
            at + 1
        };
        let mut at = 0;
        for (name, v) in TABLE2 {
            at = check(name, false, v, 2, at);
        }
        for (name, v) in TABLE3_REASONING {
            at = check(name, false, v, 3, at);
        }
        for (name, wo, v) in TABLE3_EXPLORATION {
            at = check(name, *wo, v, 3, at);
        }
        assert_eq!(TABLE2.len(), 13);
        assert_eq!(TABLE3_REASONING.len(), 9);
        assert_eq!(TABLE3_EXPLORATION.len(), 18);
    }
}
