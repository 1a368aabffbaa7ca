//! What the targets that answer for the store share: operation ids it never asked.

/// A store operation's id the server never asked, of any owner's, picked by `arg`.
pub(crate) fn unasked(arg: u8) -> responses_mcp_core::store::StoreId {
    use responses_mcp_core::store::{StoreId, StoreTag};
    let tags = [
        StoreTag::Limit,
        StoreTag::Claim,
        StoreTag::Count,
        StoreTag::Task,
    ];
    StoreId {
        tag: tags[usize::from(arg) % tags.len()],
        n: u64::from(arg),
    }
}
