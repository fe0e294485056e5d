//! Workspace roles and the permissions each grants. Roles nest: an operator
//! can do everything a viewer can, an admin everything an operator can.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Viewer,
    Operator,
    Admin,
}

/// What an operation needs from the caller's role in the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Read everything in the workspace.
    Read,
    /// Reprocess e-mails, test webhooks, resend deliveries.
    Operate,
    /// Create, update and delete inboxes and webhooks, change allowed senders,
    /// rotate webhook secrets, delete e-mails.
    Administer,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Viewer, Role::Operator, Role::Admin];
    pub const NAMES: [&'static str; 3] = ["viewer", "operator", "admin"];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "viewer" => Some(Role::Viewer),
            "operator" => Some(Role::Operator),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }

    pub fn allows(self, permission: Permission) -> bool {
        let needed = match permission {
            Permission::Read => Role::Viewer,
            Permission::Operate => Role::Operator,
            Permission::Administer => Role::Admin,
        };
        self >= needed
    }
}

/// A role's schema: one of `NAMES`.
impl schemars::JsonSchema for Role {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Role")
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "enum": Role::NAMES})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_nest() {
        assert!(Role::Viewer.allows(Permission::Read));
        assert!(!Role::Viewer.allows(Permission::Operate));
        assert!(Role::Operator.allows(Permission::Operate));
        assert!(!Role::Operator.allows(Permission::Administer));
        assert!(Role::Admin.allows(Permission::Administer));
    }
}
