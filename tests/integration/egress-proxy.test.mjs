/*
 * Egress drills with the egress proxy alone (tool and Fetch layers off): every channel a page
 * has to a denied host is refused and the denied server sees nothing,
 * while the allowed twin of each request still loads. The drills are in
 * egress-drills.mjs.
 */
import { defineDrills, useDrill, LAYER_SETS } from './egress-drills.mjs';

defineDrills(useDrill({ layers: LAYER_SETS.proxy }));
