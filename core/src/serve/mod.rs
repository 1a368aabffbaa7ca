//! Serving MCP over Streamable HTTP, sans IO: one client connection's steps
//! ([`connection`]), what each request gets ([`endpoint`]), who may talk to the endpoint
//! ([`access`]) and who a trusted gateway says a request is for ([`gateway`]), one listener's connection cap, drain rule and open exchanges ([`listener`]),
//! and whether a modern request's mirrored headers agree with its body
//! ([`headers`]).
//!
//! The HTTP/1.1 bytes are read and written by [`crate::http`]; these are the decisions
//! between a parsed request and the JSON-RPC message it carries.

pub mod access;
mod base64;
pub mod connection;
pub mod endpoint;
pub mod exchange;
pub mod gateway;
pub mod headers;
pub mod listener;
