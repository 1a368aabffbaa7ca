//! Our own types for the OpenAI Responses API: the request we send, and what we read back.
//!
//! Only the fields this product uses are modelled. Responses are read leniently: every
//! field is optional and unknown item, content and annotation types are skipped, because
//! real payloads differ from the published schema (see shared/reference/openai/README.md).

mod body;
pub mod calendar;
pub mod drift;
pub mod models;
pub mod options;
pub mod pricing;
pub(crate) mod report;
pub(crate) mod request;
mod response;
mod status;
pub mod stream;

pub use body::ResponseBody;
pub use drift::{Adjustment, Limit, Param, ParamRejection};
pub use models::{model_supports, Capabilities};
pub use report::{ModelSource, Report, Upstream};
pub use request::{RequestPlan, UserIds};
pub use response::{parse_answer, Answer, Billed, Citation, SearchCount, Usage, UsageParts};
pub use status::{
    classify_reply, Advice, FailureKind, RetryAfter, UpstreamFailure, UpstreamVerdict,
};
