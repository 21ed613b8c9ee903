//! The JSON report.

use super::Summary;
use crate::verdict::ScenarioResult;

/// Renders the JSON report: `{ "clients": [...], "summary": {...}, "results": [...] }`.
pub fn render(results: &[ScenarioResult]) -> String {
    let report = serde_json::json!({ "clients": super::clients(results), "summary": Summary::of(results), "results": results });
    serde_json::to_string_pretty(&report)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot render: {e}\"}}"))
}
