//! The one place a [`Refusal`] becomes an MCP error (issue 28 §6): its
//! kind picks the JSON-RPC code, its message is sent as written, and a
//! refused URI is echoed in `data` only when it is short (READ-016,
//! HARD-005).

use rmcp::ErrorData;
use serde_json::Value;

use crate::echo::EXCERPT_BYTES;
use crate::refusal::Refusal;

impl From<Refusal> for ErrorData {
    fn from(r: Refusal) -> ErrorData {
        match r {
            Refusal::InvalidParams(message) => ErrorData::invalid_params(message, None),
            Refusal::InvalidUri { message, uri } => {
                ErrorData::invalid_params(message, uri_data(uri))
            }
            Refusal::NotFound { message, uri } => {
                ErrorData::resource_not_found(message, uri_data(uri))
            }
            Refusal::Changed(message) => ErrorData::internal_error(message, None),
        }
    }
}

/// `{"uri": URI}` for a refused `resources/read`, whatever refused it
/// (READ-016): only when the URI is no longer than an excerpt (HARD-005);
/// the message already names it by an excerpt.
fn uri_data(uri: String) -> Option<Value> {
    (uri.len() <= EXCERPT_BYTES).then(|| serde_json::json!({ "uri": uri }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ErrorCode;

    /// Each kind keeps the code and `data` clients have always seen.
    #[test]
    fn each_kind_has_its_code_and_data() {
        let long = format!("skill://{}", "x".repeat(EXCERPT_BYTES));
        let cases = [
            (
                Refusal::InvalidParams("m".into()),
                ErrorCode::INVALID_PARAMS,
                None,
            ),
            (
                Refusal::InvalidUri {
                    message: "m".into(),
                    uri: "skill://a".into(),
                },
                ErrorCode::INVALID_PARAMS,
                Some(serde_json::json!({"uri": "skill://a"})),
            ),
            (
                Refusal::NotFound {
                    message: "m".into(),
                    uri: "skill://a/b".into(),
                },
                ErrorCode::RESOURCE_NOT_FOUND,
                Some(serde_json::json!({"uri": "skill://a/b"})),
            ),
            (
                Refusal::NotFound {
                    message: "m".into(),
                    uri: long,
                },
                ErrorCode::RESOURCE_NOT_FOUND,
                None,
            ),
            (
                Refusal::Changed("m".into()),
                ErrorCode::INTERNAL_ERROR,
                None,
            ),
        ];
        for (r, code, data) in cases {
            let e = ErrorData::from(r);
            assert_eq!((e.code, e.message.as_ref(), e.data), (code, "m", data));
        }
    }
}
