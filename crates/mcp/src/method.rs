//! The MCP methods this server knows, as one enum: a message's method name
//! is parsed into it once (`jsonrpc::parse_message`), and every decision
//! about a method — whether it needs a workspace, whether its result is cacheable, which parameter the
//! `Mcp-Name` header mirrors; in which era it is served is `Era::serves` —
//! is a match on it. The names live here only.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Initialize,
    Ping,
    ServerDiscover,
    ToolsList,
    ToolsCall,
    ResourcesList,
    ResourcesTemplatesList,
    ResourcesRead,
    PromptsList,
    PromptsGet,
    CompletionComplete,
    TasksGet,
    TasksUpdate,
    TasksCancel,
}

impl Method {
    pub const ALL: [Method; 14] = [
        Method::Initialize,
        Method::Ping,
        Method::ServerDiscover,
        Method::ToolsList,
        Method::ToolsCall,
        Method::ResourcesList,
        Method::ResourcesTemplatesList,
        Method::ResourcesRead,
        Method::PromptsList,
        Method::PromptsGet,
        Method::CompletionComplete,
        Method::TasksGet,
        Method::TasksUpdate,
        Method::TasksCancel,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::ServerDiscover => "server/discover",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::ResourcesList => "resources/list",
            Method::ResourcesTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::PromptsList => "prompts/list",
            Method::PromptsGet => "prompts/get",
            Method::CompletionComplete => "completion/complete",
            Method::TasksGet => "tasks/get",
            Method::TasksUpdate => "tasks/update",
            Method::TasksCancel => "tasks/cancel",
        }
    }

    /// The method of this name, if this server knows it (in either era).
    pub fn parse(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// Methods of the tasks extension (served when the request declares it).
    pub fn is_task(self) -> bool {
        matches!(self, Method::TasksGet | Method::TasksUpdate | Method::TasksCancel)
    }

    /// Whether it acts on a workspace (everything but discovery and the handshake).
    pub fn needs_workspace(self) -> bool {
        !matches!(self, Method::ServerDiscover | Method::Initialize | Method::Ping)
    }

    /// Results that carry `ttlMs`/`cacheScope` when complete (stateless era).
    pub fn is_cacheable(self) -> bool {
        matches!(
            self,
            Method::ServerDiscover
                | Method::ToolsList
                | Method::PromptsList
                | Method::ResourcesList
                | Method::ResourcesTemplatesList
                | Method::ResourcesRead
        )
    }

    /// The parameter the `Mcp-Name` routing header mirrors, if any.
    pub fn name_param(self) -> Option<&'static str> {
        match self {
            Method::ToolsCall | Method::PromptsGet => Some("name"),
            Method::ResourcesRead => Some("uri"),
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => Some("taskId"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_parses_back_from_its_name() {
        for method in Method::ALL {
            assert_eq!(Method::parse(method.as_str()), Some(method));
        }
        assert_eq!(Method::parse("tools/cal"), None);
        assert_eq!(Method::parse(""), None);
    }
}
