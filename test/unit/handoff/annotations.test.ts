/**
 * The handoff's annotations: the opt-in's Secret list, the pod template's generations (parsed, rewritten with one
 * entry changed and the others kept), and which Reloader annotation would roll a workload on the same Secret.
 */
import fc from 'fast-check';
import { OPT_IN, RELOADER, optInOf, optedInSecrets, reloaderCovering, templateGenerations, withGeneration } from '../../../src/handoff';

describe('the opt-in annotation', () => {
  it('names Secrets, comma separated, blanks ignored, each once, sorted', () => {
    expect(optedInSecrets(' db-credentials, app-credentials ,,app-credentials')).toEqual(['app-credentials', 'db-credentials']);
    expect(optInOf({ [OPT_IN]: 'app-credentials' })).toEqual(['app-credentials']);
  });

  it('opts in for nothing when absent, empty or naming no valid Secret', () => {
    expect(optedInSecrets(undefined)).toEqual([]);
    expect(optedInSecrets('')).toEqual([]);
    expect(optedInSecrets(' , ,')).toEqual([]);
    expect(optedInSecrets('App_Credentials,-x,*')).toEqual([]);
    expect(optInOf({ 'other/annotation': 'app-credentials' })).toEqual([]);
  });
});

describe('the pod template\'s generations', () => {
  it('reads <secret>=<generation> entries and ignores anything else', () => {
    expect([...templateGenerations('app-credentials=3, db-credentials = 12,bad,x=0,y=-1,Z=2')]).toEqual([
      ['app-credentials', 3],
      ['db-credentials', 12],
    ]);
    expect(templateGenerations(undefined).size).toBe(0);
  });

  it('rewrites one Secret\'s entry and keeps the others, sorted', () => {
    expect(withGeneration(undefined, 'app-credentials', 1)).toBe('app-credentials=1');
    expect(withGeneration('db-credentials=2,app-credentials=1', 'app-credentials', 2)).toBe('app-credentials=2,db-credentials=2');
    expect(withGeneration('zz=1,junk', 'aa', 4)).toBe('aa=4,zz=1');
  });

  it('round-trips: the written value reads back with the new entry and every valid old one (property)', () => {
    const name = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
    fc.assert(
      fc.property(fc.dictionary(name, fc.integer({ min: 1, max: 1e9 })), name, fc.integer({ min: 1, max: 1e9 }), (old, secret, generation) => {
        const value = Object.entries(old).map(([k, v]) => `${k}=${v}`).join(',');
        const read = templateGenerations(withGeneration(value, secret, generation));
        expect(read.get(secret)).toBe(generation);
        for (const [k, v] of Object.entries(old)) if (k !== secret) expect(read.get(k)).toBe(v);
        expect(read.size).toBe(new Set([...Object.keys(old), secret]).size);
        // Idempotent: writing the same generation again changes nothing.
        expect(withGeneration(withGeneration(value, secret, generation), secret, generation)).toBe(withGeneration(value, secret, generation));
      }),
    );
  });
});

describe('Stakater Reloader\'s annotations', () => {
  it('finds the one under which Reloader would roll the workload on the same Secret', () => {
    expect(reloaderCovering({ [RELOADER.auto]: 'true' }, 'app-credentials')).toBe(RELOADER.auto);
    expect(reloaderCovering({ [RELOADER.secretAuto]: 'TRUE' }, 'app-credentials')).toBe(RELOADER.secretAuto);
    expect(reloaderCovering({ [RELOADER.secretReload]: 'x, app-credentials' }, 'app-credentials')).toBe(RELOADER.secretReload);
  });

  it('finds none when Reloader is told nothing about the Secret', () => {
    expect(reloaderCovering(undefined, 'app-credentials')).toBeUndefined();
    expect(reloaderCovering({ [RELOADER.auto]: 'false' }, 'app-credentials')).toBeUndefined();
    expect(reloaderCovering({ [RELOADER.secretReload]: 'db-credentials' }, 'app-credentials')).toBeUndefined();
    expect(reloaderCovering({ 'configmap.reloader.stakater.com/auto': 'true' }, 'app-credentials')).toBeUndefined();
  });
});
