//! The research-use notice shown above every list of repurposing suggestions (the Discover
//! page, the shortlist).

use leptos::prelude::*;

/// Suggestions are hypotheses, not clinical advice.
#[component]
pub fn Notice() -> impl IntoView {
    view! {
        <div class="notice" role="note">
            "Suggestions are hypotheses for research, not clinical advice: they do not account for druggability, dosing or safety, and need preclinical and clinical validation."
        </div>
    }
}
