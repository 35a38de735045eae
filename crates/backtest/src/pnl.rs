//! Realised profit and loss of each fill, by the average-cost method.
//!
//! A position's cost basis is the quantity-weighted mean price of the fills
//! that opened or grew it (long or short). A fill that shrinks it realises
//! `closed quantity × (fill price − basis)` for a long, the opposite for a
//! short; a fill that crosses zero closes the old side first and opens the
//! rest at its own price. Costs are not in these figures: each fill carries
//! its own ([`Trade::cost`]), so the net result of a position is its
//! realised P&L less the costs of its fills.
//!
//! Over any run, `final equity − initial capital = Σ realised − Σ costs +
//! Σ open quantity × (last close − basis)` (tested).

use crate::{Side, Trade};

/// A relative residue below which a position counts as closed: the
/// accounting sets a closed quantity to exactly 0, while the sum of its
/// fills may differ from that in the last bits.
const CLOSED: f64 = 1e-9;

/// One asset's open position.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Position {
    /// Signed quantity (negative when short).
    pub qty: f64,
    /// Average price of the open quantity (0 when flat).
    pub basis: f64,
}

/// The realised P&L of each of `trades` (date order, `asset` below
/// `assets`): `None` for a fill that only opens or grows a position, the
/// realised amount for one that shrinks, closes or reverses it. Also the
/// positions left open after the last fill.
pub fn realised(trades: &[Trade], assets: usize) -> (Vec<Option<f64>>, Vec<Position>) {
    let mut book = vec![Position::default(); assets];
    let pnl = trades
        .iter()
        .map(|t| {
            let signed = match t.side {
                Side::Buy => t.qty,
                Side::Sell => -t.qty,
            };
            apply(&mut book[t.asset], signed, t.price)
        })
        .collect();
    (pnl, book)
}

/// Applies a fill of `signed` quantity at `price` to `pos`; the P&L it
/// realises, if it shrinks the position.
fn apply(pos: &mut Position, signed: f64, price: f64) -> Option<f64> {
    if pos.qty == 0.0 || pos.qty.signum() == signed.signum() {
        let qty = pos.qty + signed;
        pos.basis = (pos.basis * pos.qty.abs() + price * signed.abs()) / qty.abs();
        pos.qty = qty;
        return None;
    }
    let closed = signed.abs().min(pos.qty.abs());
    let pnl = closed * (price - pos.basis) * pos.qty.signum();
    let left = pos.qty + signed;
    if left.abs() <= CLOSED * pos.qty.abs().max(signed.abs()) {
        *pos = Position::default();
    } else if left.signum() != pos.qty.signum() {
        // Crossed zero: the rest opens the other side at this price.
        *pos = Position {
            qty: left,
            basis: price,
        };
    } else {
        pos.qty = left;
    }
    Some(pnl)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(asset: usize, side: Side, qty: f64, price: f64) -> Trade {
        Trade {
            date: 0,
            asset,
            side,
            qty,
            price,
            cost: 0.0,
        }
    }

    #[test]
    fn averages_the_basis_and_realises_on_the_way_out() {
        let trades = [
            fill(0, Side::Buy, 10.0, 100.0),
            fill(0, Side::Buy, 10.0, 110.0),
            fill(0, Side::Sell, 5.0, 120.0),
            fill(0, Side::Sell, 15.0, 90.0),
        ];
        let (pnl, open) = realised(&trades, 1);
        assert_eq!(pnl[..2], [None, None]);
        assert_eq!(pnl[2], Some(5.0 * (120.0 - 105.0)));
        assert_eq!(pnl[3], Some(15.0 * (90.0 - 105.0)));
        assert_eq!(open[0], Position::default());
    }

    #[test]
    fn shorts_gain_when_the_price_falls_and_a_reversal_reopens_at_its_price() {
        let trades = [
            fill(1, Side::Sell, 4.0, 50.0),
            fill(1, Side::Buy, 6.0, 40.0),
            fill(1, Side::Sell, 1.0, 45.0),
        ];
        let (pnl, open) = realised(&trades, 2);
        assert_eq!(pnl[0], None);
        assert_eq!(pnl[1], Some(4.0 * 10.0), "4 short closed 10 lower");
        assert_eq!(pnl[2], Some(1.0 * 5.0), "the 2 long opened at 40");
        assert_eq!(
            open[1],
            Position {
                qty: 1.0,
                basis: 40.0
            }
        );
        assert_eq!(open[0], Position::default());
    }
}
