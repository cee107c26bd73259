//! Socket options with libzmq's numbers, defaults, value sizes and validation.

use crate::error::{Error, Result};
pub(crate) use crate::peer_filters::{IpcFilters, TcpAcceptMask};
use bytes::Bytes;
use ferromq_zmtp::curve::KeyPair;
use ferromq_zmtp::{z85, MechanismConfig};
use zeroize::{Zeroize, Zeroizing};

/// libzmq's socket option numbers used by the core.
#[allow(missing_docs)]
pub mod id {
    pub const AFFINITY: i32 = 4;
    pub const ROUTING_ID: i32 = 5;
    pub const SUBSCRIBE: i32 = 6;
    pub const UNSUBSCRIBE: i32 = 7;
    pub const RATE: i32 = 8;
    pub const RECOVERY_IVL: i32 = 9;
    pub const SNDBUF: i32 = 11;
    pub const RCVBUF: i32 = 12;
    pub const RCVMORE: i32 = 13;
    pub const FD: i32 = 14;
    pub const EVENTS: i32 = 15;
    pub const TYPE: i32 = 16;
    pub const LINGER: i32 = 17;
    pub const RECONNECT_IVL: i32 = 18;
    pub const BACKLOG: i32 = 19;
    pub const RECONNECT_IVL_MAX: i32 = 21;
    pub const MAXMSGSIZE: i32 = 22;
    pub const SNDHWM: i32 = 23;
    pub const RCVHWM: i32 = 24;
    pub const MULTICAST_HOPS: i32 = 25;
    pub const RCVTIMEO: i32 = 27;
    pub const SNDTIMEO: i32 = 28;
    pub const IPV4ONLY: i32 = 31;
    pub const LAST_ENDPOINT: i32 = 32;
    pub const ROUTER_MANDATORY: i32 = 33;
    pub const TCP_KEEPALIVE: i32 = 34;
    pub const TCP_KEEPALIVE_CNT: i32 = 35;
    pub const TCP_KEEPALIVE_IDLE: i32 = 36;
    pub const TCP_KEEPALIVE_INTVL: i32 = 37;
    pub const TCP_ACCEPT_FILTER: i32 = 38;
    pub const IMMEDIATE: i32 = 39;
    pub const XPUB_VERBOSE: i32 = 40;
    pub const ROUTER_RAW: i32 = 41;
    pub const IPV6: i32 = 42;
    pub const MECHANISM: i32 = 43;
    pub const PLAIN_SERVER: i32 = 44;
    pub const PLAIN_USERNAME: i32 = 45;
    pub const PLAIN_PASSWORD: i32 = 46;
    pub const CURVE_SERVER: i32 = 47;
    pub const CURVE_PUBLICKEY: i32 = 48;
    pub const CURVE_SECRETKEY: i32 = 49;
    pub const CURVE_SERVERKEY: i32 = 50;
    pub const PROBE_ROUTER: i32 = 51;
    pub const REQ_CORRELATE: i32 = 52;
    pub const REQ_RELAXED: i32 = 53;
    pub const CONFLATE: i32 = 54;
    pub const ZAP_DOMAIN: i32 = 55;
    pub const ROUTER_HANDOVER: i32 = 56;
    pub const TOS: i32 = 57;
    pub const IPC_FILTER_PID: i32 = 58;
    pub const IPC_FILTER_UID: i32 = 59;
    pub const IPC_FILTER_GID: i32 = 60;
    pub const CONNECT_ROUTING_ID: i32 = 61;
    pub const GSSAPI_SERVER: i32 = 62;
    pub const HANDSHAKE_IVL: i32 = 66;
    pub const SOCKS_PROXY: i32 = 68;
    pub const XPUB_NODROP: i32 = 69;
    pub const XPUB_MANUAL: i32 = 71;
    pub const XPUB_WELCOME_MSG: i32 = 72;
    pub const STREAM_NOTIFY: i32 = 73;
    pub const INVERT_MATCHING: i32 = 74;
    pub const HEARTBEAT_IVL: i32 = 75;
    pub const HEARTBEAT_TTL: i32 = 76;
    pub const HEARTBEAT_TIMEOUT: i32 = 77;
    pub const XPUB_VERBOSER: i32 = 78;
    pub const CONNECT_TIMEOUT: i32 = 79;
    pub const TCP_MAXRT: i32 = 80;
    pub const THREAD_SAFE: i32 = 81;
    pub const MULTICAST_MAXTPDU: i32 = 84;
    pub const USE_FD: i32 = 89;
    pub const BINDTODEVICE: i32 = 92;
    pub const ZAP_ENFORCE_DOMAIN: i32 = 93;
    pub const LOOPBACK_FASTPATH: i32 = 94;
    pub const MULTICAST_LOOP: i32 = 96;
    pub const XPUB_MANUAL_LAST_VALUE: i32 = 98;
    pub const SOCKS_USERNAME: i32 = 99;
    pub const SOCKS_PASSWORD: i32 = 100;
    pub const ONLY_FIRST_SUBSCRIBE: i32 = 108;
    pub const RECONNECT_STOP: i32 = 109;
    pub const TOPICS_COUNT: i32 = 116;
}

/// Settings every socket has (pattern-specific ones live in the pattern).
#[derive(Clone, Debug)]
pub struct Options {
    pub(crate) sndhwm: i32,
    pub(crate) rcvhwm: i32,
    pub(crate) linger: i32,
    pub(crate) rcvtimeo: i32,
    pub(crate) sndtimeo: i32,
    pub(crate) reconnect_ivl: i32,
    pub(crate) reconnect_ivl_max: i32,
    pub(crate) backlog: i32,
    pub(crate) maxmsgsize: i64,
    pub(crate) affinity: u64,
    pub(crate) routing_id: Bytes,
    pub(crate) connect_routing_id: Option<Bytes>,
    pub(crate) sndbuf: i32,
    pub(crate) rcvbuf: i32,
    pub(crate) tcp_keepalive: i32,
    pub(crate) tcp_keepalive_cnt: i32,
    pub(crate) tcp_keepalive_idle: i32,
    pub(crate) tcp_keepalive_intvl: i32,
    pub(crate) immediate: bool,
    pub(crate) ipv6: bool,
    pub(crate) tos: i32,
    pub(crate) handshake_ivl: i32,
    pub(crate) heartbeat_ivl: i32,
    pub(crate) heartbeat_ttl: i32,
    pub(crate) heartbeat_timeout: i32,
    pub(crate) connect_timeout: i32,
    pub(crate) tcp_maxrt: i32,
    pub(crate) multicast_hops: i32,
    pub(crate) rate: i32,
    pub(crate) recovery_ivl: i32,
    pub(crate) multicast_maxtpdu: i32,
    /// ZMQ_ZAP_DOMAIN as set (bytes, like every string option: libzmq does not ask for
    /// UTF-8).
    pub(crate) zap_domain: Vec<u8>,
    pub(crate) last_endpoint: String,
    pub(crate) conflate: bool,
    pub(crate) use_fd: i32,
    pub(crate) invert_matching: bool,
    pub(crate) zap_enforce_domain: bool,
    pub(crate) loopback_fastpath: bool,
    pub(crate) multicast_loop: bool,
    pub(crate) reconnect_stop: i32,
    pub(crate) bindtodevice: Vec<u8>,
    pub(crate) socks_proxy: Vec<u8>,
    pub(crate) socks_username: Vec<u8>,
    pub(crate) socks_password: Secret,
    pub(crate) ipc_filters: IpcFilters,
    /// `ZMQ_TCP_ACCEPT_FILTER` masks (see `TcpAcceptMask`); empty: everyone.
    pub(crate) tcp_accept_filters: Vec<TcpAcceptMask>,
    pub(crate) security: Security,
    /// ZMQ_ROUTER_RAW was set on this ROUTER: its connections speak no ZMTP (as a
    /// STREAM's). Not an option of its own: libzmq does not read it back either.
    pub(crate) raw_socket: bool,
}

/// `ZMQ_MECHANISM` values.
pub mod mechanism {
    /// `ZMQ_NULL`
    pub const NULL: i32 = 0;
    /// `ZMQ_PLAIN`
    pub const PLAIN: i32 = 1;
    /// `ZMQ_CURVE`
    pub const CURVE: i32 = 2;
}

/// A secret byte string: wiped on drop, never printed.
#[derive(Clone, Default)]
pub(crate) struct Secret(pub(crate) Zeroizing<Vec<u8>>);

impl Secret {
    /// A copy for `zmq_getsockopt`, with room for the NUL it appends, so that appending it
    /// does not move the bytes and leave a copy behind unwiped (the C API wipes this one
    /// once it has written it out).
    fn readable(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.0.len() + 1);
        v.extend_from_slice(&self.0);
        v
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The security settings, as libzmq keeps them: the last option set decides the
/// mechanism and the role.
#[derive(Clone, Debug, Default)]
pub(crate) struct Security {
    pub(crate) mechanism: i32,
    pub(crate) as_server: bool,
    pub(crate) plain_username: Vec<u8>,
    pub(crate) plain_password: Secret,
    pub(crate) curve_public: [u8; 32],
    pub(crate) curve_secret: Secret,
    pub(crate) curve_server: [u8; 32],
}

impl Security {
    /// The engine's mechanism configuration for these settings.
    pub(crate) fn mechanism_config(&self) -> MechanismConfig {
        match (self.mechanism, self.as_server) {
            (mechanism::PLAIN, true) => MechanismConfig::PlainServer,
            (mechanism::PLAIN, false) => MechanismConfig::PlainClient {
                username: self.plain_username.clone(),
                password: self.plain_password.0.clone(),
            },
            (mechanism::CURVE, server) => {
                let mut secret = [0u8; 32];
                let n = self.curve_secret.0.len().min(32);
                secret[..n].copy_from_slice(&self.curve_secret.0[..n]);
                let keys = KeyPair {
                    public: self.curve_public,
                    secret: Zeroizing::new(secret),
                };
                secret.zeroize();
                if server {
                    MechanismConfig::CurveServer { keys }
                } else {
                    MechanismConfig::CurveClient {
                        keys,
                        server_key: self.curve_server,
                    }
                }
            }
            _ => MechanismConfig::Null,
        }
    }
}

/// Reads a CURVE key option: 32 raw bytes, or 40 Z85 characters (optionally
/// NUL-terminated), as libzmq accepts.
fn curve_key(val: &[u8]) -> Result<[u8; 32]> {
    let text = match val.len() {
        32 => return Ok(val.try_into().expect("length checked")),
        40 => val,
        41 if val[40] == 0 => &val[..40],
        _ => return Err(Error::InvalidArgument),
    };
    let text = std::str::from_utf8(text).map_err(|_| Error::InvalidArgument)?;
    let key = z85::decode(text).ok_or(Error::InvalidArgument)?;
    key.try_into().map_err(|_| Error::InvalidArgument)
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sndhwm: 1000,
            rcvhwm: 1000,
            linger: -1,
            rcvtimeo: -1,
            sndtimeo: -1,
            reconnect_ivl: 100,
            reconnect_ivl_max: 0,
            backlog: 100,
            maxmsgsize: -1,
            affinity: 0,
            routing_id: Bytes::new(),
            connect_routing_id: None,
            sndbuf: -1,
            rcvbuf: -1,
            tcp_keepalive: -1,
            tcp_keepalive_cnt: -1,
            tcp_keepalive_idle: -1,
            tcp_keepalive_intvl: -1,
            immediate: false,
            ipv6: false,
            tos: 0,
            handshake_ivl: 30_000,
            heartbeat_ivl: 0,
            heartbeat_ttl: 0,
            heartbeat_timeout: -1,
            connect_timeout: 0,
            tcp_maxrt: 0,
            multicast_hops: 1,
            rate: 100,
            recovery_ivl: 10_000,
            multicast_maxtpdu: 1500,
            zap_domain: Vec::new(),
            last_endpoint: String::new(),
            conflate: false,
            use_fd: -1,
            invert_matching: false,
            zap_enforce_domain: false,
            loopback_fastpath: false,
            multicast_loop: true,
            reconnect_stop: 0,
            bindtodevice: Vec::new(),
            socks_proxy: Vec::new(),
            socks_username: Vec::new(),
            socks_password: Secret::default(),
            ipc_filters: IpcFilters::default(),
            tcp_accept_filters: Vec::new(),
            security: Security::default(),
            raw_socket: false,
        }
    }
}

/// Reads a C `int` option value (exactly 4 bytes, as libzmq requires).
pub fn int_value(val: &[u8]) -> Result<i32> {
    let arr: [u8; 4] = val.try_into().map_err(|_| Error::InvalidArgument)?;
    Ok(i32::from_ne_bytes(arr))
}

/// Reads a boolean option: an int, any non-zero value meaning true (libzmq's lenient
/// options such as ROUTER_MANDATORY).
pub fn bool_value(val: &[u8]) -> Result<bool> {
    Ok(int_value(val)? != 0)
}

/// Reads a socket pattern's boolean option (ROUTER_MANDATORY, PROBE_ROUTER, XPUB_VERBOSE,
/// REQ_RELAXED, ...): libzmq takes any int from 0, non-zero meaning true, and refuses a
/// negative one.
pub fn pattern_bool_value(val: &[u8]) -> Result<bool> {
    Ok(at_least(int_value(val)?, 0)? != 0)
}

/// Reads a boolean option that libzmq accepts only as 0 or 1 (IMMEDIATE, IPV6, CONFLATE).
pub fn strict_bool_value(val: &[u8]) -> Result<bool> {
    match int_value(val)? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Error::InvalidArgument),
    }
}

/// A string option of at most `max` bytes, kept as given.
fn string_bytes(val: &[u8], max: usize) -> Result<Vec<u8>> {
    if val.len() > max {
        return Err(Error::InvalidArgument);
    }
    Ok(val.to_vec())
}

/// libzmq's limit of most string options (a length that fits a ZMTP short field).
const STRING_MAX: usize = 255;
/// The longest ZMQ_BINDTODEVICE libzmq takes (Linux's device name size, with its NUL).
const DEVICE_NAME_MAX: usize = 16;

fn at_least(v: i32, min: i32) -> Result<i32> {
    if v < min {
        Err(Error::InvalidArgument)
    } else {
        Ok(v)
    }
}

/// A value to hand back from `getsockopt`.
pub enum OptionValue {
    /// C `int`.
    Int(i32),
    /// `int64_t`.
    Int64(i64),
    /// `uint64_t`.
    Uint64(u64),
    /// Binary data (no terminator).
    Binary(Bytes),
    /// A string, returned with a NUL terminator: the bytes as set (not necessarily
    /// UTF-8) or, for LAST_ENDPOINT, the endpoint's text.
    Str(Vec<u8>),
    /// A CURVE key: 32 raw bytes for a 32-byte buffer, 40 Z85 characters and
    /// a NUL for a 41-byte one.
    CurveKey([u8; 32]),
}

impl Options {
    /// Applies a generic option. `Ok(false)` means "not a generic option".
    pub(crate) fn set(&mut self, opt: i32, val: &[u8]) -> Result<bool> {
        use id::*;
        match opt {
            SNDHWM => self.sndhwm = at_least(int_value(val)?, 0)?,
            RCVHWM => self.rcvhwm = at_least(int_value(val)?, 0)?,
            LINGER => self.linger = at_least(int_value(val)?, -1)?,
            RCVTIMEO => self.rcvtimeo = at_least(int_value(val)?, -1)?,
            SNDTIMEO => self.sndtimeo = at_least(int_value(val)?, -1)?,
            RECONNECT_IVL => self.reconnect_ivl = at_least(int_value(val)?, -1)?,
            RECONNECT_IVL_MAX => self.reconnect_ivl_max = at_least(int_value(val)?, 0)?,
            BACKLOG => self.backlog = at_least(int_value(val)?, 0)?,
            MAXMSGSIZE => {
                let arr: [u8; 8] = val.try_into().map_err(|_| Error::InvalidArgument)?;
                self.maxmsgsize = i64::from_ne_bytes(arr);
            }
            AFFINITY => {
                let arr: [u8; 8] = val.try_into().map_err(|_| Error::InvalidArgument)?;
                self.affinity = u64::from_ne_bytes(arr);
            }
            ROUTING_ID => {
                if val.is_empty() || val.len() > 255 {
                    return Err(Error::InvalidArgument);
                }
                self.routing_id = Bytes::copy_from_slice(val);
            }
            CONNECT_ROUTING_ID => {
                if val.is_empty() || val.len() > 255 {
                    return Err(Error::InvalidArgument);
                }
                self.connect_routing_id = Some(Bytes::copy_from_slice(val));
            }
            SNDBUF => self.sndbuf = at_least(int_value(val)?, -1)?,
            RCVBUF => self.rcvbuf = at_least(int_value(val)?, -1)?,
            TCP_KEEPALIVE => {
                let v = int_value(val)?;
                if !(-1..=1).contains(&v) {
                    return Err(Error::InvalidArgument);
                }
                self.tcp_keepalive = v;
            }
            TCP_KEEPALIVE_CNT => self.tcp_keepalive_cnt = at_least(int_value(val)?, -1)?,
            TCP_KEEPALIVE_IDLE => self.tcp_keepalive_idle = at_least(int_value(val)?, -1)?,
            TCP_KEEPALIVE_INTVL => self.tcp_keepalive_intvl = at_least(int_value(val)?, -1)?,
            IMMEDIATE => self.immediate = strict_bool_value(val)?,
            IPV6 => self.ipv6 = strict_bool_value(val)?,
            TOS => self.tos = at_least(int_value(val)?, 0)?,
            HANDSHAKE_IVL => self.handshake_ivl = at_least(int_value(val)?, 0)?,
            HEARTBEAT_IVL => self.heartbeat_ivl = at_least(int_value(val)?, 0)?,
            HEARTBEAT_TTL => {
                // Kept in deciseconds on the wire: libzmq divides first, then checks.
                let ds = int_value(val)? / 100;
                if !(0..=0xffff).contains(&ds) {
                    return Err(Error::InvalidArgument);
                }
                self.heartbeat_ttl = ds * 100;
            }
            HEARTBEAT_TIMEOUT => self.heartbeat_timeout = at_least(int_value(val)?, 0)?,
            CONNECT_TIMEOUT => self.connect_timeout = at_least(int_value(val)?, 0)?,
            TCP_MAXRT => self.tcp_maxrt = at_least(int_value(val)?, 0)?,
            MULTICAST_HOPS => self.multicast_hops = at_least(int_value(val)?, 1)?,
            RATE => self.rate = at_least(int_value(val)?, 1)?,
            RECOVERY_IVL => self.recovery_ivl = at_least(int_value(val)?, 0)?,
            MULTICAST_MAXTPDU => self.multicast_maxtpdu = at_least(int_value(val)?, 1)?,
            // libzmq refuses an empty domain: once set, it cannot be cleared.
            ZAP_DOMAIN if val.is_empty() => return Err(Error::InvalidArgument),
            ZAP_DOMAIN => self.zap_domain = string_bytes(val, STRING_MAX)?,
            CONFLATE => self.conflate = strict_bool_value(val)?,
            PLAIN_SERVER | CURVE_SERVER => {
                let v = int_value(val)?;
                if v != 0 && v != 1 {
                    return Err(Error::InvalidArgument);
                }
                let sec = &mut self.security;
                sec.as_server = v == 1;
                sec.mechanism = match (v, opt) {
                    (0, _) => mechanism::NULL,
                    (_, PLAIN_SERVER) => mechanism::PLAIN,
                    _ => mechanism::CURVE,
                };
            }
            PLAIN_USERNAME | PLAIN_PASSWORD => {
                if val.len() > 255 {
                    return Err(Error::InvalidArgument);
                }
                let sec = &mut self.security;
                if val.is_empty() {
                    // libzmq: a NULL value switches back to the NULL mechanism.
                    sec.mechanism = mechanism::NULL;
                } else {
                    if opt == PLAIN_USERNAME {
                        sec.plain_username = val.to_vec();
                    } else {
                        sec.plain_password = Secret(Zeroizing::new(val.to_vec()));
                    }
                    sec.as_server = false;
                    sec.mechanism = mechanism::PLAIN;
                }
            }
            CURVE_PUBLICKEY | CURVE_SECRETKEY | CURVE_SERVERKEY => {
                let key = Zeroizing::new(curve_key(val)?);
                let sec = &mut self.security;
                match opt {
                    CURVE_PUBLICKEY => sec.curve_public = *key,
                    CURVE_SECRETKEY => sec.curve_secret = Secret(Zeroizing::new(key.to_vec())),
                    _ => {
                        sec.curve_server = *key;
                        sec.as_server = false;
                    }
                }
                sec.mechanism = mechanism::CURVE;
            }
            INVERT_MATCHING => self.invert_matching = bool_value(val)?,
            IPV4ONLY => self.ipv6 = !strict_bool_value(val)?,
            ZAP_ENFORCE_DOMAIN => self.zap_enforce_domain = bool_value(val)?,
            LOOPBACK_FASTPATH => self.loopback_fastpath = bool_value(val)?,
            MULTICAST_LOOP => self.multicast_loop = bool_value(val)?,
            RECONNECT_STOP => self.reconnect_stop = int_value(val)?,
            IPC_FILTER_PID | IPC_FILTER_UID | IPC_FILTER_GID => self.ipc_filters.set(opt, val)?,
            // A mask adds to the list; no value (NULL, 0) empties it.
            TCP_ACCEPT_FILTER if val.is_empty() => self.tcp_accept_filters.clear(),
            TCP_ACCEPT_FILTER => {
                let mask = TcpAcceptMask::parse(val, self.ipv6)?;
                self.tcp_accept_filters.push(mask);
            }
            // Applied by the tcp transport: `tcp::listen` / `tcp::connect`, `socks`.
            BINDTODEVICE => self.bindtodevice = string_bytes(val, DEVICE_NAME_MAX)?,
            // No limit here in libzmq.
            SOCKS_PROXY => self.socks_proxy = val.to_vec(),
            SOCKS_USERNAME => self.socks_username = string_bytes(val, STRING_MAX)?,
            SOCKS_PASSWORD => {
                self.socks_password = Secret(Zeroizing::new(string_bytes(val, STRING_MAX)?))
            }
            USE_FD => self.use_fd = at_least(int_value(val)?, -1)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Reads a generic option, `None` if it is not one.
    pub(crate) fn get(&self, opt: i32) -> Option<OptionValue> {
        use id::*;
        use OptionValue::*;
        Some(match opt {
            SNDHWM => Int(self.sndhwm),
            RCVHWM => Int(self.rcvhwm),
            LINGER => Int(self.linger),
            RCVTIMEO => Int(self.rcvtimeo),
            SNDTIMEO => Int(self.sndtimeo),
            RECONNECT_IVL => Int(self.reconnect_ivl),
            RECONNECT_IVL_MAX => Int(self.reconnect_ivl_max),
            BACKLOG => Int(self.backlog),
            MAXMSGSIZE => Int64(self.maxmsgsize),
            AFFINITY => Uint64(self.affinity),
            ROUTING_ID => Binary(self.routing_id.clone()),
            SNDBUF => Int(self.sndbuf),
            RCVBUF => Int(self.rcvbuf),
            TCP_KEEPALIVE => Int(self.tcp_keepalive),
            TCP_KEEPALIVE_CNT => Int(self.tcp_keepalive_cnt),
            TCP_KEEPALIVE_IDLE => Int(self.tcp_keepalive_idle),
            TCP_KEEPALIVE_INTVL => Int(self.tcp_keepalive_intvl),
            IMMEDIATE => Int(self.immediate as i32),
            IPV6 => Int(self.ipv6 as i32),
            TOS => Int(self.tos),
            HANDSHAKE_IVL => Int(self.handshake_ivl),
            HEARTBEAT_IVL => Int(self.heartbeat_ivl),
            HEARTBEAT_TTL => Int(self.heartbeat_ttl),
            HEARTBEAT_TIMEOUT => Int(self.heartbeat_timeout),
            CONNECT_TIMEOUT => Int(self.connect_timeout),
            TCP_MAXRT => Int(self.tcp_maxrt),
            MULTICAST_HOPS => Int(self.multicast_hops),
            RATE => Int(self.rate),
            RECOVERY_IVL => Int(self.recovery_ivl),
            MULTICAST_MAXTPDU => Int(self.multicast_maxtpdu),
            ZAP_DOMAIN => Str(self.zap_domain.clone()),
            LAST_ENDPOINT => Str(self.last_endpoint.clone().into_bytes()),
            CONFLATE => Int(self.conflate as i32),
            USE_FD => Int(self.use_fd),
            INVERT_MATCHING => Int(self.invert_matching as i32),
            IPV4ONLY => Int(!self.ipv6 as i32),
            ZAP_ENFORCE_DOMAIN => Int(self.zap_enforce_domain as i32),
            LOOPBACK_FASTPATH => Int(self.loopback_fastpath as i32),
            MULTICAST_LOOP => Int(self.multicast_loop as i32),
            RECONNECT_STOP => Int(self.reconnect_stop),
            BINDTODEVICE => Str(self.bindtodevice.clone()),
            SOCKS_PROXY => Str(self.socks_proxy.clone()),
            SOCKS_USERNAME => Str(self.socks_username.clone()),
            SOCKS_PASSWORD => Str(self.socks_password.readable()),
            PLAIN_USERNAME => Str(self.security.plain_username.clone()),
            PLAIN_PASSWORD => Str(self.security.plain_password.readable()),
            MECHANISM => Int(self.security.mechanism),
            PLAIN_SERVER => {
                Int((self.security.as_server && self.security.mechanism == mechanism::PLAIN) as i32)
            }
            CURVE_SERVER => {
                Int((self.security.as_server && self.security.mechanism == mechanism::CURVE) as i32)
            }
            CURVE_PUBLICKEY => CurveKey(self.security.curve_public),
            CURVE_SECRETKEY => {
                let mut k = [0u8; 32];
                let s = &self.security.curve_secret.0;
                k[..s.len().min(32)].copy_from_slice(&s[..s.len().min(32)]);
                CurveKey(k)
            }
            CURVE_SERVERKEY => CurveKey(self.security.curve_server),
            THREAD_SAFE => Int(0),
            _ => return None,
        })
    }

    /// Heartbeat timeout in ms: HEARTBEAT_TIMEOUT, or HEARTBEAT_IVL when that is unset.
    pub(crate) fn effective_heartbeat_timeout(&self) -> i32 {
        if self.heartbeat_timeout >= 0 {
            self.heartbeat_timeout
        } else {
            self.heartbeat_ivl
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_read_out_with_room_for_the_terminator() {
        let mut o = Options::default();
        o.set(id::PLAIN_PASSWORD, b"secret").unwrap();
        o.set(id::SOCKS_PASSWORD, b"hunter2").unwrap();
        for (opt, want) in [
            (id::PLAIN_PASSWORD, &b"secret"[..]),
            (id::SOCKS_PASSWORD, b"hunter2"),
        ] {
            let Some(OptionValue::Str(v)) = o.get(opt) else {
                panic!("option {opt} is a string")
            };
            assert_eq!(v, want);
            // The C API appends a NUL: it must not move the bytes (leaving a copy behind).
            assert!(v.capacity() > v.len(), "option {opt}: no spare byte");
        }
    }
}
