import { createEnvelope, events, parseEnvelope } from './index';

const data = { groups: ['currency'], version: 3, changed_by: 1 };

describe('event envelopes', () => {
  it('are CloudEvents 1.0 with a versioned type and a correlation id', () => {
    const envelope = createEnvelope(events.settingsChanged, data, {
      source: 'settings',
      correlationId: 'c-1',
    });
    expect(envelope).toMatchObject({
      specversion: '1.0',
      source: 'settings',
      type: 'settings.general_settings.changed.v1',
      datacontenttype: 'application/json',
      correlationid: 'c-1',
      data,
    });
    expect(parseEnvelope(JSON.parse(JSON.stringify(envelope)))).toEqual({ ok: true, envelope });
  });

  it('refuse a payload that does not match the schema of its type, on publish and on consume', () => {
    expect(() =>
      createEnvelope(events.settingsChanged, { groups: 'currency' } as never, {
        source: 's',
        correlationId: 'c',
      }),
    ).toThrow();
    const envelope = createEnvelope(events.settingsChanged, data, {
      source: 'settings',
      correlationId: 'c-1',
    });
    const tampered = { ...envelope, data: { ...data, version: 'three' } };
    expect(parseEnvelope(tampered)).toMatchObject({ ok: false, reason: expect.stringContaining('version') });
    expect(parseEnvelope({ ...envelope, type: 'nobody.knows.this.v1' })).toMatchObject({ ok: false });
    expect(parseEnvelope({ hello: 'world' })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('envelope'),
    });
  });
});
