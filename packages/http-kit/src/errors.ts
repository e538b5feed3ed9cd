// One definition in @pack/errors (no express there, so domain code can throw them); re-exported
// so that HTTP code keeps one import for everything it needs.
export * from '@pack/errors';
