//! A do-nothing MCP stdio server: the floor `berth-mcp`'s spawn → first tool
//! result is measured against (`bench/mcp-first.sh`). It is built as
//! `berth-mcp` is (rmcp over `stdio_pipes`, a current-thread tokio runtime),
//! answers `initialize`, `tools/list` and `tools/call` of one tool,
//! `device_context`, with a fixed result, and does nothing else, so the
//! ratio of the two measures berth's own work.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt, tool, tool_handler, tool_router};

#[derive(Clone)]
struct Floor {
    tool_router: ToolRouter<Floor>,
}

#[tool_router]
impl Floor {
    #[tool(name = "device_context", description = "Answers a fixed result.")]
    async fn device_context(&self, _args: JsonObject) -> Result<CallToolResult, McpError> {
        let mut result = CallToolResult::success(vec![ContentBlock::text("{\"floor\":true}")]);
        result.structured_content = Some(serde_json::json!({ "floor": true }));
        Ok(result)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Floor {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(async {
        let floor = Floor {
            tool_router: Floor::tool_router(),
        };
        if let Ok(service) = floor.serve(rmcp::transport::stdio_pipes()).await {
            let _ = service.waiting().await;
        }
    });
}
