import type { Principal } from '@pack/contracts';

/**
 * The callers every component test uses, with the same ids and names in every service, so a
 * test reads the same way whichever service it calls.
 */
export const admin: Principal = { id: 1, username: 'ada', role: 'admin' };
export const owner: Principal = { id: 10, username: 'olivia', role: 'service_owner' };
export const otherOwner: Principal = { id: 11, username: 'oscar', role: 'service_owner' };
export const consumer: Principal = { id: 20, username: 'carla', role: 'consumer' };
export const otherConsumer: Principal = { id: 21, username: 'conrad', role: 'consumer' };

let nextUserId = 1000;
/**
 * A user no other test has seen (ids from 1000 up), so a test can count and list what is
 * visible to its users without depending on what earlier tests left in the database.
 */
export function newUser(role: Principal['role'], name: string = role): Principal {
  nextUserId += 1;
  return { id: nextUserId, username: `${name}_${nextUserId}`, role };
}
