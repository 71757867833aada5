//! The tool list `tools/list` answers, computed once when the code changes
//! rather than on every start: `tools.json` beside this file holds each tool
//! of the table in `berth_vocab::tools` with its name, description, input
//! schema and annotations. Generating the schemas with schemars took about 40% of
//! the shim's instructions to its first result; parsing this file takes a
//! fraction of that (docs/benchmarks.md, "MCP spawn → first tool result").
//!
//! A test fails when the file differs from what the table generates. To
//! regenerate it after changing a tool, its arguments or its results:
//!
//! ```sh
//! BERTH_WRITE_TOOLS=1 cargo test -p berth-mcp --bin berth-mcp tool_list
//! ```

use std::sync::LazyLock;

use rmcp::model::Tool;

/// The generated list, as JSON.
const TOOLS_JSON: &str = include_str!("tools.json");

static TOOLS: LazyLock<Vec<Tool>> = LazyLock::new(|| {
    serde_json::from_str(TOOLS_JSON).expect("tools.json is generated from the tool table")
});

/// Every tool, in the table's order, read on first use.
pub fn tools() -> &'static [Tool] {
    &TOOLS
}

/// Reads the list and writes it once, so that answering `tools/list` finds
/// both the list and the code that serialises it warm.
pub fn warm() {
    let _ = serde_json::to_vec(tools());
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use berth_vocab::tools::{Effect, Tool as Table};
    use rmcp::model::{Tool, ToolAnnotations};
    use serde_json::Value;

    /// A tool as `tools/list` shows it: the table's name, description,
    /// schemas and effect.
    fn definition(tool: Table) -> Tool {
        let annotations = match tool.effect() {
            Effect::ReadOnly => ToolAnnotations::new().read_only(true),
            Effect::Additive => ToolAnnotations::new().destructive(false),
            Effect::Destructive { idempotent: false } => ToolAnnotations::new().destructive(true),
            Effect::Destructive { idempotent: true } => {
                ToolAnnotations::new().destructive(true).idempotent(true)
            }
        };
        // No output schema: docs/decisions/0033-tools-declare-no-output-schema.md.
        Tool::new(
            tool.name(),
            tool.description(),
            Arc::new(tool.input_schema()),
        )
        .with_annotations(annotations.open_world(false))
    }

    #[test]
    fn tool_list_json_is_what_the_tool_table_generates() {
        let generated: Vec<Tool> = Table::ALL.into_iter().map(definition).collect();
        let generated = serde_json::to_value(&generated).unwrap();
        // Compared as values: key order depends on serde_json's features.
        let checked_in: Value = serde_json::from_str(super::TOOLS_JSON).unwrap();
        if checked_in != generated && std::env::var_os("BERTH_WRITE_TOOLS").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/tools.json");
            let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
            std::fs::write(path, text).unwrap();
            // This build still holds the old file: the run fails, and the next one checks it.
            panic!("rewrote mcp-shim/src/tools.json; run the test again to check it");
        }
        assert!(
            checked_in == generated,
            "mcp-shim/src/tools.json is stale; regenerate it with \
             BERTH_WRITE_TOOLS=1 cargo test -p berth-mcp --bin berth-mcp tool_list"
        );
        let names: Vec<String> = super::tools().iter().map(|t| t.name.to_string()).collect();
        let table: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(names, table);
    }
}
