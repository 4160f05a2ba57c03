//! PFC headroom per port and lossless priority.
//!
//! Two models. `sonic` is SONiC's dynamic headroom calculation as it is
//! done for Mellanox Spectrum (sonic-swss `cfgmgr/buffer_headroom_mellanox.lua`;
//! design in sonic-net/SONiC `doc/qos/dynamically-headroom-calculation.md`):
//!
//! - worst-case cell factor `wcf = cell / 64` when `cell > 128`, else
//!   `2 * cell / (1 + cell)`; occupancy
//!   `occ = (100 - spp + spp * wcf) / 100` for a small-packet share `spp`;
//! - peer response `quanta(speed) * 512 / 8` bytes (the profile's
//!   `peer_response_bytes` for speeds without a quanta entry);
//! - cable `2 * L * speed / 198,000,000 m/s / 8`, gearbox
//!   `speed * gearbox_ns / 8`;
//! - `propagation = port_mtu + cable + 2 * gearbox + mac_phy + peer`;
//! - `xoff = ceil_1024(lossless_mtu + propagation * occ)`,
//!   `xon = ceil_1024(pipeline_latency)`, reserved `xoff + xon`.
//!
//! `simple` is the Tagger drafts' estimate (section 3.3):
//! `2 * (MTU + PFC frame + rate * t_wire) + rate * t_response`, 5 ns per
//! metre, the response capped at 60 quanta of 512 bit times; all of it is
//! xoff.

use super::profile::{HeadroomModel, Profile, pause_quanta};

/// Headroom of one (port, lossless priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortHeadroom {
    /// Bytes absorbing what is in flight after a pause is sent.
    pub xoff: u64,
    /// Bytes absorbing what arrives between a resume and traffic flowing again.
    pub xon: u64,
}

impl PortHeadroom {
    /// Reserved without a shared headroom pool.
    pub fn size(&self) -> u64 {
        self.xoff + self.xon
    }
}

/// Signal speed in cable, m/s (SONiC's constant).
const CABLE_SIGNAL_SPEED: f64 = 198_000_000.0;

fn ceil_1024(x: f64) -> u64 {
    ((x / 1024.0).ceil() * 1024.0) as u64
}

/// The drafts' estimate in bytes, for `rate_gbps`, `cable_m` and `mtu`.
pub fn simple_bytes(rate_gbps: f64, cable_m: f64, mtu: f64) -> f64 {
    const PFC_FRAME: f64 = 64.0;
    let bytes_per_s = rate_gbps * 1e9 / 8.0;
    let wire = bytes_per_s * cable_m * 5e-9;
    let response = 60.0 * 512.0 / 8.0;
    2.0 * (mtu + PFC_FRAME + wire) + response
}

/// Headroom of one (port, lossless priority) at `speed_gbps` over
/// `cable_m`, by the profile's model.
///
/// Complexity: O(1).
pub fn port_headroom(p: &Profile, speed_gbps: f64, cable_m: f64) -> PortHeadroom {
    port_headroom_at(p, speed_gbps, cable_m, p.port_mtu)
}

/// [`port_headroom`] of a port whose MTU is `port_mtu` bytes (the SONiC
/// model counts a whole port-MTU frame in flight; the drafts' model, the
/// largest lossless packet only).
///
/// Complexity: O(1).
pub fn port_headroom_at(p: &Profile, speed_gbps: f64, cable_m: f64, port_mtu: u64) -> PortHeadroom {
    match (p.headroom, &p.sonic) {
        (HeadroomModel::Sonic, Some(s)) => {
            let cell = s.cell_bytes as f64;
            let wcf = if s.cell_bytes > 128 {
                cell / 64.0
            } else {
                2.0 * cell / (1.0 + cell)
            };
            let spp = s.small_packet_percent;
            let occ = (100.0 - spp + spp * wcf) / 100.0;
            let peer = pause_quanta(speed_gbps)
                .map_or(s.peer_response_bytes as f64, |q| (q * 512 / 8) as f64);
            let bps = speed_gbps * 1e9;
            let cable = 2.0 * cable_m * bps / CABLE_SIGNAL_SPEED / 8.0;
            let gearbox = bps * s.gearbox_delay_ns * 1e-9 / 8.0;
            let propagation =
                port_mtu as f64 + cable + 2.0 * gearbox + s.mac_phy_delay_bytes as f64 + peer;
            PortHeadroom {
                xoff: ceil_1024(p.lossless_mtu as f64 + propagation * occ),
                xon: ceil_1024(s.pipeline_latency_bytes as f64),
            }
        }
        // A profile validated without sonic parameters is simple.
        _ => PortHeadroom {
            xoff: simple_bytes(speed_gbps, cable_m, p.lossless_mtu as f64).ceil() as u64,
            xon: 0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SONiC's Spectrum-2 test vector: 100 Gb/s, 5 m, port MTU 9100,
    /// lossless MTU 1500, 100% small packets: xoff 82,944, xon 18,432,
    /// size 101,376, to the byte.
    #[test]
    fn sonic_test_vector() {
        let p = Profile::resolve("spectrum2").unwrap();
        let h = port_headroom(&p, 100.0, 5.0);
        assert_eq!((h.xoff, h.xon, h.size()), (82_944, 18_432, 101_376));
    }

    /// The drafts' example: about 22 KB at 40 Gb/s, 300 m, MTU 1500, and a
    /// 32-port switch with 8 priorities needs about 5.6 MB.
    #[test]
    fn drafts_example() {
        let h = simple_bytes(40.0, 300.0, 1500.0);
        assert!((21_000.0..23_000.0).contains(&h), "{h}");
        let switch = 32.0 * 8.0 * h;
        assert!((5.4e6..5.8e6).contains(&switch), "{switch}");
        let p = Profile::resolve("drafts-40g").unwrap();
        assert_eq!(port_headroom(&p, 40.0, 300.0).xoff, h.ceil() as u64);
    }

    /// Longer cables and faster ports never need less headroom.
    #[test]
    fn monotone_in_cable_and_speed() {
        for name in ["spectrum2", "tomahawk"] {
            let p = Profile::resolve(name).unwrap();
            let mut last = 0;
            for l in (0..2000).step_by(37) {
                let s = port_headroom(&p, 100.0, l as f64).size();
                assert!(s >= last, "{name} at {l} m");
                last = s;
            }
            assert!(
                port_headroom(&p, 400.0, 100.0).size() > port_headroom(&p, 100.0, 100.0).size()
            );
        }
    }
}
