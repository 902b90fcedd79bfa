//! Which addresses the web tools may reach.
//!
//! The model chooses the URLs `fetch_page` and `web_search` open, partly from pages it has just
//! read, so a page can steer elroy at the user's own machine, network or cloud metadata service.
//! Every hop of a request (the first URL, every redirect, and every address a DNS name resolves
//! to) is checked here before elroy connects:
//!
//! - **never**: link-local (`169.254.0.0/16`, `fe80::/10`), cloud metadata (`169.254.169.254`,
//!   `169.254.170.2`, `100.100.100.200`, `192.0.0.192`, `fd00:ec2::254`), multicast, broadcast
//!   and reserved (`240.0.0.0/4`) addresses;
//! - **only with `fetch_allow_private_addresses: true`**: loopback (`127.0.0.0/8`, `::1`),
//!   private (RFC 1918, `fc00::/7`, the deprecated `fec0::/10`), shared carrier-grade NAT
//!   (`100.64.0.0/10`) and unspecified (`0.0.0.0/8`, `::`) addresses;
//! - everything else is public and allowed.
//!
//! IPv6 forms that carry an IPv4 address (`::ffff:a.b.c.d`, `::a.b.c.d`, NAT64 `64:ff9b::/96`,
//! 6to4 `2002::/16`) are judged by that IPv4 address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// What kind of address an IP address is, as far as the web tools care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressKind {
    /// A public unicast address: always allowed.
    Public,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918, `fc00::/7`, `fec0::/10`.
    Private,
    /// `100.64.0.0/10` (shared address space of carrier-grade NAT).
    SharedNat,
    /// `0.0.0.0/8`, `::` (Linux connects these to the local machine).
    Unspecified,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// A cloud provider's instance metadata service.
    CloudMetadata,
    /// Multicast, broadcast or reserved.
    NotUnicast,
}

impl AddressKind {
    /// The kind of `ip`.
    pub fn of(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => Self::of_v4(v4),
            IpAddr::V6(v6) => Self::of_v6(v6),
        }
    }

    fn of_v4(ip: Ipv4Addr) -> Self {
        let [a, b, c, d] = ip.octets();
        match (a, b, c, d) {
            (169, 254, 169, 254) | (169, 254, 170, 2) | (100, 100, 100, 200) | (192, 0, 0, 192) => {
                AddressKind::CloudMetadata
            }
            (169, 254, _, _) => AddressKind::LinkLocal,
            (0, _, _, _) => AddressKind::Unspecified,
            (127, _, _, _) => AddressKind::Loopback,
            (10, _, _, _) | (192, 168, _, _) => AddressKind::Private,
            (172, b, _, _) if (16..=31).contains(&b) => AddressKind::Private,
            (100, b, _, _) if (64..=127).contains(&b) => AddressKind::SharedNat,
            (a, _, _, _) if a >= 224 => AddressKind::NotUnicast,
            _ => AddressKind::Public,
        }
    }

    fn of_v6(ip: Ipv6Addr) -> Self {
        let segments = ip.segments();
        if ip.is_unspecified() {
            return AddressKind::Unspecified;
        }
        if ip.is_loopback() {
            return AddressKind::Loopback;
        }
        if let Some(v4) = embedded_v4(ip) {
            return Self::of_v4(v4);
        }
        if ip == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254) {
            return AddressKind::CloudMetadata;
        }
        match segments[0] {
            s if s & 0xffc0 == 0xfe80 => AddressKind::LinkLocal,
            s if s & 0xffc0 == 0xfec0 => AddressKind::Private,
            s if s & 0xfe00 == 0xfc00 => AddressKind::Private,
            s if s & 0xff00 == 0xff00 => AddressKind::NotUnicast,
            _ => AddressKind::Public,
        }
    }

    /// Refused whatever the configuration says.
    pub fn always_refused(self) -> bool {
        matches!(
            self,
            AddressKind::LinkLocal | AddressKind::CloudMetadata | AddressKind::NotUnicast
        )
    }

    /// Refused unless `fetch_allow_private_addresses` is true.
    pub fn needs_private_permission(self) -> bool {
        matches!(
            self,
            AddressKind::Loopback
                | AddressKind::Private
                | AddressKind::SharedNat
                | AddressKind::Unspecified
        )
    }

    /// `a loopback address`, … (used in error messages).
    pub fn description(self) -> &'static str {
        match self {
            AddressKind::Public => "a public address",
            AddressKind::Loopback => "a loopback address",
            AddressKind::Private => "a private network address",
            AddressKind::SharedNat => "a shared (carrier-grade NAT) address",
            AddressKind::Unspecified => "an unspecified address",
            AddressKind::LinkLocal => "a link-local address",
            AddressKind::CloudMetadata => "a cloud metadata address",
            AddressKind::NotUnicast => "a multicast, broadcast or reserved address",
        }
    }
}

/// The IPv4 address an IPv6 address carries: IPv4-mapped (`::ffff:0:0/96`), IPv4-compatible
/// (`::/96` except `::` and `::1`), NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] | [0, 0, 0, 0, 0, 0, hi, lo] => Some(low(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(low(hi, lo)),
        [0x2002, hi, lo, ..] => Some(low(hi, lo)),
        _ => None,
    }
}

/// Why elroy will not connect to an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressRefusal {
    /// The DNS name that resolved to `ip`, when the URL named a host rather than an address.
    pub host: Option<String>,
    /// The refused address.
    pub ip: IpAddr,
    /// Its kind.
    pub kind: AddressKind,
}

impl std::fmt::Display for AddressRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.host {
            Some(host) => write!(f, "{host} resolves to {}, ", self.ip)?,
            None => write!(f, "{} is ", self.ip)?,
        }
        f.write_str(self.kind.description())?;
        if self.kind.always_refused() {
            f.write_str(", which elroy never fetches")
        } else {
            f.write_str(
                " (set fetch_allow_private_addresses: true to allow loopback and private addresses)",
            )
        }
    }
}

impl std::error::Error for AddressRefusal {}

/// `Ok` when `ip` may be contacted with `allow_private` as `fetch_allow_private_addresses`.
///
/// # Errors
/// The [`AddressRefusal`] (with `host: None`) when it may not.
pub fn check_address(ip: IpAddr, allow_private: bool) -> Result<(), AddressRefusal> {
    let kind = AddressKind::of(ip);
    if kind.always_refused() || (kind.needs_private_permission() && !allow_private) {
        return Err(AddressRefusal {
            host: None,
            ip,
            kind,
        });
    }
    Ok(())
}

/// reqwest's DNS resolver for the web tools: the system resolver, keeping only the addresses
/// [`check_address`] allows, so the connection goes only to checked addresses (a name that
/// resolves to `127.0.0.1` is refused, and so is a DNS answer that changes between a check and
/// the connection, since there is only one lookup). Names in `trusted` (the configured proxies)
/// are resolved unchecked: the user chose them.
#[derive(Debug, Clone)]
pub(crate) struct GuardedResolver {
    pub(crate) allow_private: bool,
    pub(crate) trusted: Vec<String>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let allow_private = self.allow_private;
        let trusted = self.trusted.iter().any(|t| t.eq_ignore_ascii_case(&host));
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if trusted {
                return Ok(Box::new(found.into_iter()) as Addrs);
            }
            let mut refused = None;
            let mut kept = Vec::with_capacity(found.len());
            for addr in found {
                match check_address(addr.ip(), allow_private) {
                    Ok(()) => kept.push(addr),
                    Err(refusal) => {
                        refused.get_or_insert(refusal);
                    }
                }
            }
            match (kept.is_empty(), refused) {
                (true, Some(mut refusal)) => {
                    refusal.host = Some(host);
                    Err(Box::new(refusal) as Box<dyn std::error::Error + Send + Sync>)
                }
                _ => Ok(Box::new(kept.into_iter()) as Addrs),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> AddressKind {
        AddressKind::of(text.parse().unwrap())
    }

    #[test]
    fn kinds() {
        for (ip, expected) in [
            ("8.8.8.8", AddressKind::Public),
            ("2606:4700::1111", AddressKind::Public),
            ("127.0.0.1", AddressKind::Loopback),
            ("127.255.0.9", AddressKind::Loopback),
            ("::1", AddressKind::Loopback),
            ("::ffff:127.0.0.1", AddressKind::Loopback),
            ("::127.0.0.1", AddressKind::Loopback),
            ("64:ff9b::a9fe:a9fe", AddressKind::CloudMetadata),
            ("2002:a00:1::", AddressKind::Private),
            ("10.1.2.3", AddressKind::Private),
            ("172.16.0.1", AddressKind::Private),
            ("172.31.255.255", AddressKind::Private),
            ("172.32.0.1", AddressKind::Public),
            ("192.168.1.1", AddressKind::Private),
            ("fd12:3456::1", AddressKind::Private),
            ("fc00::1", AddressKind::Private),
            ("100.64.0.1", AddressKind::SharedNat),
            ("100.128.0.1", AddressKind::Public),
            ("0.0.0.0", AddressKind::Unspecified),
            ("::", AddressKind::Unspecified),
            ("169.254.1.1", AddressKind::LinkLocal),
            ("fe80::1", AddressKind::LinkLocal),
            ("169.254.169.254", AddressKind::CloudMetadata),
            ("100.100.100.200", AddressKind::CloudMetadata),
            ("fd00:ec2::254", AddressKind::CloudMetadata),
            ("224.0.0.1", AddressKind::NotUnicast),
            ("255.255.255.255", AddressKind::NotUnicast),
            ("ff02::1", AddressKind::NotUnicast),
        ] {
            assert_eq!(kind(ip), expected, "{ip}");
        }
    }

    #[test]
    fn permission() {
        let ip = |t: &str| t.parse::<IpAddr>().unwrap();
        assert!(check_address(ip("93.184.216.34"), false).is_ok());
        assert!(check_address(ip("127.0.0.1"), false).is_err());
        assert!(check_address(ip("127.0.0.1"), true).is_ok());
        assert!(check_address(ip("169.254.169.254"), true).is_err());
        assert!(check_address(ip("fe80::1"), true).is_err());
        assert_eq!(
            check_address(ip("10.0.0.1"), false)
                .unwrap_err()
                .to_string(),
            "10.0.0.1 is a private network address (set fetch_allow_private_addresses: true to allow loopback and private addresses)"
        );
        assert_eq!(
            check_address(ip("169.254.169.254"), true)
                .unwrap_err()
                .to_string(),
            "169.254.169.254 is a cloud metadata address, which elroy never fetches"
        );
    }
}
